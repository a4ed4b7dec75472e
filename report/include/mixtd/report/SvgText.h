// The text pieces every SVG figure writes (PlotSvg, ScatterSvg, BarsSvg, the
// report): coordinates with one decimal, escaped text and attribute values.
// Locale-independent (std::to_chars), so the same input always gives the
// same bytes.
#pragma once

#include <charconv>
#include <string>

namespace mixtd::report::svg {

// v with `decimals` decimals (as printf's "%.<decimals>f" in the C locale).
inline std::string fixed(double v, int decimals) {
  char b[400];
  const auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, decimals);
  return std::string(b, r.ptr);
}

// A coordinate with one decimal.
inline std::string num(double v) { return fixed(v, 1); }

// v with 6 significant digits (as printf's "%g" in the C locale).
inline std::string general(double v) {
  char b[64];
  const auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::general, 6);
  return std::string(b, r.ptr);
}

// Text content with <, > and & escaped.
inline std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return o;
}

// An attribute value (between double quotes): text escaping plus the quotes.
inline std::string attr(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '"' ? "&quot;" : c == '\'' ? "&#39;" : escape(std::string(1, c));
  return o;
}

}  // namespace mixtd::report::svg
