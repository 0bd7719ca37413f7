// The SVG bar chart: layout constants, then groups, bars, axis and legend.
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cachet::bench {
namespace {

constexpr int kBarWidth = 16;
constexpr int kGroupGap = 28;
constexpr int kPlotHeight = 260;
constexpr int kLeft = 60;
constexpr int kTop = 90;  // room for the rotated labels of the tallest bars
// Log scale over this many powers of ten below the fastest column: an in-process
// store is a hundred times faster than a network one, and both must stay legible.
constexpr int kDecades = 4;
constexpr int kBottom = 120;  // scenario names and the legend
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Colour(std::size_t index) { return kColours[index % std::size(kColours)]; }

std::vector<std::string> TargetNames(const std::vector<ScenarioFigures>& results) {
  std::vector<std::string> names;
  for (const ScenarioFigures& s : results) {
    for (const Figure& f : s.figures) {
      if (std::find(names.begin(), names.end(), f.target) == names.end()) names.push_back(f.target);
    }
  }
  return names;
}

std::string Text(int x, int y, const std::string& text, const char* extra = "") {
  return "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" " + extra + ">" +
         Escape(text) + "</text>\n";
}

std::string Bar(int x, const Figure& f, double fastest, const std::string& colour) {
  const int base = kTop + kPlotHeight;
  if (!f.ran || f.rate <= 0) {
    return Text(x + kBarWidth / 2, base - 4, "n/a",
                "class=\"na\" text-anchor=\"middle\" font-size=\"9\"");
  }
  const double scaled = 1 + std::log10(f.rate / fastest) / kDecades;
  const int height = std::max(1, static_cast<int>(kPlotHeight * std::max(scaled, 0.0)));
  std::string out = "<rect class=\"bar\" x=\"" + std::to_string(x) + "\" y=\"" +
                    std::to_string(base - height) + "\" width=\"" + std::to_string(kBarWidth) +
                    "\" height=\"" + std::to_string(height) + "\" fill=\"" + colour + "\"><title>" +
                    Escape(f.target + ": " + ShortRate(f.rate) + "/s") + "</title></rect>\n";
  const int label_x = x + kBarWidth / 2 + 3;
  const int label_y = base - height - 4;
  return out + Text(label_x, label_y, ShortRate(f.rate),
                    ("font-size=\"9\" transform=\"rotate(-90 " + std::to_string(label_x) + " " +
                     std::to_string(label_y) + ")\"")
                        .c_str());
}

std::string Axis(int width) {
  std::string out;
  std::string label = "100%";
  for (int decade = 0; decade <= kDecades; ++decade) {
    const int y = kTop + kPlotHeight * decade / kDecades;
    out += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(width - 10) +
           "\" y1=\"" + std::to_string(y) + "\" y2=\"" + std::to_string(y) +
           "\" stroke=\"#ddd\"/>\n";
    out += Text(kLeft - 6, y + 4, label, "text-anchor=\"end\" font-size=\"10\"");
    label = decade == 0 ? "10%" : decade == 1 ? "1%" : "0." + std::string(decade - 2, '0') + "1%";
  }
  return out;
}

std::string Legend(const std::vector<std::string>& names, int y) {
  std::string out;
  int x = kLeft;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y - 10) +
           "\" width=\"12\" height=\"12\" fill=\"" + Colour(i) + "\"/>\n";
    out += Text(x + 16, y, names[i], "font-size=\"12\"");
    x += 30 + 8 * static_cast<int>(names[i].size());
  }
  return out;
}

}  // namespace

std::string ShortRate(double rate) {
  char buffer[32];
  if (rate >= 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.3gM", rate / 1e6);
  } else if (rate >= 1e3) {
    std::snprintf(buffer, sizeof buffer, "%.3gk", rate / 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3g", rate);
  }
  return buffer;
}

std::string RenderSvgChart(const std::vector<ScenarioFigures>& results, const std::string& title) {
  const std::vector<std::string> names = TargetNames(results);
  const int group_width = static_cast<int>(names.size()) * kBarWidth + kGroupGap;
  const int width = std::max(kLeft + static_cast<int>(results.size()) * group_width + 20, 420);
  const int height = kTop + kPlotHeight + kBottom;
  std::string svg =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
      std::to_string(width) + "\" height=\"" + std::to_string(height) +
      "\" font-family=\"sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += Text(kLeft, 22, title, "font-size=\"15\" font-weight=\"bold\"");
  svg +=
      Text(kLeft, 38, "rate per scenario relative to its fastest column, log scale (labels: ops/s)",
           "font-size=\"11\" fill=\"#555\"");
  svg += Axis(width);
  int x = kLeft + kGroupGap / 2;
  for (const ScenarioFigures& s : results) {
    double fastest = 0;
    for (const Figure& f : s.figures) fastest = std::max(fastest, f.ran ? f.rate : 0.0);
    for (const Figure& f : s.figures) {
      const auto index =
          static_cast<std::size_t>(std::find(names.begin(), names.end(), f.target) - names.begin());
      svg += Bar(x + static_cast<int>(index) * kBarWidth, f, fastest, Colour(index));
    }
    const int centre = x + static_cast<int>(names.size()) * kBarWidth / 2;
    const int label_y = kTop + kPlotHeight + 12;
    svg += Text(centre, label_y, s.scenario,
                ("class=\"group\" text-anchor=\"end\" font-size=\"11\" transform=\"rotate(-35 " +
                 std::to_string(centre) + " " + std::to_string(label_y) + ")\"")
                    .c_str());
    x += group_width;
  }
  svg += Legend(names, height - 16);
  return svg + "</svg>\n";
}

}  // namespace cachet::bench
