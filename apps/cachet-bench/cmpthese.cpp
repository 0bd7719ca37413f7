// The cmpthese layout: cell texts first, then column widths, then the lines.
#include "cmpthese.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace cachet::bench {
namespace {

using Cells = std::vector<std::vector<std::string>>;

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// Few decimals, as cmpthese: the measurements are not more precise than that.
std::string FormatRate(double value, bool as_rate) {
  const char* format = value >= 100   ? "%0.0f"
                       : value >= 10  ? "%0.1f"
                       : value >= 1   ? "%0.2f"
                       : value >= 0.1 ? "%0.3f"
                                      : "%0.2e";
  return Printf(format, value) + (as_rate ? "/s" : "");
}

Cells BuildCells(const std::vector<RateRow>& rows) {
  // cmpthese shows seconds per iteration instead when even the fastest is slow.
  const bool as_rate = rows.back().rate > 1;
  Cells cells(1, {"", as_rate ? "Rate" : "s/iter"});
  for (const RateRow& column : rows) cells[0].push_back(column.name);
  for (const RateRow& row : rows) {
    std::vector<std::string> line{row.name, FormatRate(as_rate ? row.rate : 1 / row.rate, as_rate)};
    for (const RateRow& column : rows) {
      line.push_back(&column == &row ? "--" : Printf("%.0f%%", 100 * row.rate / column.rate - 100));
    }
    cells.push_back(std::move(line));
  }
  return cells;
}

std::vector<std::size_t> ColumnWidths(const Cells& cells) {
  std::vector<std::size_t> widths(cells[0].size(), 0);
  for (const auto& line : cells) {
    for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], line[c].size());
  }
  return widths;
}

// Widens the narrowest comparison columns one step at a time until they are all
// as wide as the widest or the table reaches 80 characters (cmpthese's rule).
void EqualizeWidths(std::vector<std::size_t>* widths) {
  std::vector<std::size_t> order(widths->size() - 2);
  std::iota(order.begin(), order.end(), 2);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return (*widths)[a] < (*widths)[b]; });
  const std::size_t max_width = (*widths)[order.back()];
  std::size_t total = widths->size() - 1;
  for (std::size_t w : *widths) total += w;
  // Bounded: every pass widens at least one column towards max_width.
  while (total < 80) {
    const std::size_t min_width = (*widths)[order.front()];
    if (min_width == max_width) return;
    for (std::size_t column : order) {
      if ((*widths)[column] > min_width) break;
      ++(*widths)[column];
      if (++total >= 80) return;
    }
  }
}

std::string Pad(const std::string& text, std::size_t width, bool left) {
  const std::string fill(width > text.size() ? width - text.size() : 0, ' ');
  return left ? text + fill : fill + text;
}

}  // namespace

std::string FormatCmpthese(std::vector<RateRow> rows) {
  if (rows.empty()) return {};
  std::stable_sort(rows.begin(), rows.end(),
                   [](const RateRow& a, const RateRow& b) { return a.rate < b.rate; });
  const Cells cells = BuildCells(rows);
  std::vector<std::size_t> widths = ColumnWidths(cells);
  EqualizeWidths(&widths);
  std::string out;
  for (const auto& line : cells) {
    for (std::size_t c = 0; c < line.size(); ++c) {
      if (c > 0) out += ' ';
      out += Pad(line[c], widths[c], c == 0);
    }
    out += '\n';
  }
  return out;
}

}  // namespace cachet::bench
