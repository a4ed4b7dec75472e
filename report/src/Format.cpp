#include "mixtd/report/Format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace mixtd::report {

std::string format_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0";
  char b[64];
  const double a = std::fabs(v);
  const auto r = a >= 1e5 && a < 1e15 ? std::to_chars(b, b + sizeof b, std::round(v), std::chars_format::fixed, 0)
                                      : std::to_chars(b, b + sizeof b, v, std::chars_format::general, 6);
  const std::string s(b, r.ptr);
  return s == "-0" ? "0" : s;
}

std::string format_number(std::int64_t v) { return std::to_string(v); }

std::string format_or(const std::optional<double>& v, std::string_view absent) {
  if (!v || !std::isfinite(*v)) return std::string(absent);
  return format_number(*v);
}

std::string format_grouped(double v, int decimals) {
  if (!std::isfinite(v)) return "—";
  char b[400];
  const auto r = std::to_chars(b, b + sizeof b, std::fabs(v), std::chars_format::fixed, decimals);
  const std::string_view digits(b, static_cast<std::size_t>(r.ptr - b));
  const std::size_t whole = std::min(digits.find('.'), digits.size());  // digits before the point
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && i < whole && (whole - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  const bool zero = s.find_first_not_of("0.,") == std::string::npos;
  return (v < 0 && !zero ? "−" : "") + s;
}

std::string format_ratio(double v) {
  if (!std::isfinite(v)) return "—";
  if (std::fabs(v) >= 100) return format_grouped(v, 0);
  char b[64];
  const auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::general, 3);
  return std::string(b, r.ptr);
}

std::string format_points(double v) {
  if (!std::isfinite(v)) return "—";
  const std::string s = format_grouped(v, 2);
  return s.rfind("−", 0) == 0 ? s : "+" + s;
}

std::string json_string(std::string_view s) {
  std::string o = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"')
      o += "\\\"";
    else if (c == '\\')
      o += "\\\\";
    else if (c == '\n')
      o += "\\n";
    else if (c == '\t')
      o += "\\t";
    else if (c == '\r')
      o += "\\r";
    else if (u < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", u);
      o += b;
    } else
      o += c;
  }
  return o + "\"";
}

std::string html_escape(std::string_view s) {
  std::string o;
  for (const char c : s) switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      case '\n':
      case '\t':
      case '\r':
        o += c;
        break;
      default:  // other control characters are not allowed in XML: U+FFFD
        o += static_cast<unsigned char>(c) < 0x20 ? std::string("\xEF\xBF\xBD") : std::string(1, c);
    }
  return o;
}

}  // namespace mixtd::report
