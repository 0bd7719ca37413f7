// ReadDocument: a depth-limited SAX front end to nlohmann's DOM builder.
#include "document_reader.h"

#include <exception>
#include <string>
#include <utility>

namespace cachet {

namespace {

using DomBuilder = nlohmann::detail::json_sax_dom_parser<Json>;

// Forwards every event to nlohmann's DOM builder, counting nesting on the way in
// so that parsing stops before the reader's recursion gets deep.
class DepthLimitedBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit DepthLimitedBuilder(Json* doc) : dom_(*doc, /*allow_exceptions=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return dom_.number_float(v, s); }
  bool string(string_t& v) { return dom_.string(v); }
  bool binary(binary_t& v) { return dom_.binary(v); }
  bool key(string_t& v) { return dom_.key(v); }

  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_object() { return Leave() && dom_.end_object(); }
  bool end_array() { return Leave() && dom_.end_array(); }

  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& ex) {
    error_ = ex.what();
    return false;
  }

  // Why parsing stopped; empty if it did not fail.
  const std::string& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ <= kMaxDocumentDepth) return true;
    error_ = "nested deeper than " + std::to_string(kMaxDocumentDepth) + " levels";
    return false;
  }
  bool Leave() {
    --depth_;
    return true;
  }

  DomBuilder dom_;
  std::size_t depth_ = 0;
  std::string error_;
};

nlohmann::detail::input_format_t ToNlohmann(DocumentFormat format) {
  switch (format) {
    case DocumentFormat::kJson:
      return nlohmann::detail::input_format_t::json;
    case DocumentFormat::kMsgpack:
      return nlohmann::detail::input_format_t::msgpack;
    case DocumentFormat::kCbor:
      return nlohmann::detail::input_format_t::cbor;
  }
  return nlohmann::detail::input_format_t::json;
}

std::string_view FormatName(DocumentFormat format) {
  switch (format) {
    case DocumentFormat::kJson:
      return "json";
    case DocumentFormat::kMsgpack:
      return "msgpack";
    case DocumentFormat::kCbor:
      return "cbor";
  }
  return "document";
}

Status ParseFailure(DocumentFormat format, std::string_view reason) {
  std::string msg(FormatName(format));
  msg += ": ";
  msg += reason.empty() ? std::string_view("input does not parse") : reason;
  return Status::Corruption(msg);
}

}  // namespace

Status ReadDocument(std::string_view data, DocumentFormat format, Json* doc) {
  Json parsed;
  DepthLimitedBuilder builder(&parsed);
  bool ok = false;
  // The DOM builder can still throw (an absurd declared container size); the
  // reader's callers must never see an exception.
  try {
    ok = Json::sax_parse(data.begin(), data.end(), &builder, ToNlohmann(format),
                         /*strict=*/true);
  } catch (const std::exception& e) {
    return ParseFailure(format, e.what());
  }
  if (!ok) return ParseFailure(format, builder.error());
  *doc = std::move(parsed);
  return Status::OK();
}

}  // namespace cachet
