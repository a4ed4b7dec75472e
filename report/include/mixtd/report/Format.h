// The one rule by which the report writes a number, in report.json and in
// report.html alike (so each figure on the page is the figure in the JSON),
// and the escaping of text for JSON and HTML. Locale-independent and
// deterministic: the same value always gives the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mixtd::report {

// A double as JSON number text:
//   not finite                  -> "null" (JSON has no NaN or infinity)
//   |v| >= 1e5 and < 1e15       -> rounded to an integer ("123457")
//   otherwise                   -> 6 significant digits, as printf's "%.6g"
//                                  in the C locale ("1041.23", "0.5",
//                                  "69.758", "1.5e-05")
// Negative zero prints as "0".
std::string format_number(double v);
std::string format_number(std::int64_t v);
// An absent value is "null" in the JSON; format_or() gives the HTML's
// placeholder for it instead.
std::string format_or(const std::optional<double>& v, std::string_view absent);

// Prose on the page (the headline's sentences), never the JSON, where the
// figures keep format_number()'s digits:
//   format_grouped(4506.8)        -> "4,507" (rounded to `decimals`, thousands
//                                    grouped by commas)
//   format_ratio(1.3716)          -> "1.37"  (3 significant digits; grouped from 100)
//   format_points(-1.3333)        -> "−1.33" (2 decimals, a sign always: U+2212 or +)
std::string format_grouped(double v, int decimals = 0);
std::string format_ratio(double v);
std::string format_points(double v);

// A JSON string literal (with the quotes): ", \ and control characters
// escaped, other bytes (UTF-8) as they are.
std::string json_string(std::string_view s);

// Text for HTML content or a double-quoted attribute: & < > " ' escaped.
std::string html_escape(std::string_view s);

}  // namespace mixtd::report
