// The text pieces every SVG plot of the CLI writes (PlotSvg, ScatterSvg).
#pragma once

#include <cstdio>
#include <string>

namespace mixtd::cli::svg {

// A coordinate with one decimal.
inline std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// Text content with <, > and & escaped.
inline std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return o;
}

}  // namespace mixtd::cli::svg
