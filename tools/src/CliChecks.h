// The command line's own checks and its one error format (issue 24).
//
// Every number a user can type is bounded (`in_range`), no floating flag takes
// NaN or Inf (`refuse_non_finite`) and no unsigned flag a negative number
// (`refuse_negative_unsigned`; both applied to every command at once), and a
// parse error is one line `mixtd: error: <subcommand>: …` (`format_parse_error`).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace mixtd::cli {

// A validator that accepts a whole number in [lo, hi]; the error names the
// value and the legal range, e.g. `--frames 0: legal 1 .. 1000000`.
CLI::Validator in_range(std::int64_t lo, std::int64_t hi);
// The same for a floating value in [lo, hi]; NaN and Inf are refused.
CLI::Validator in_range(double lo, double hi);
// A fraction of the device, in (0, 1] (the solver's --budget).
CLI::Validator device_fraction();
// Overload resolution for `in_range(1, 4096)`.
inline CLI::Validator in_range(int lo, int hi) { return in_range(std::int64_t{lo}, std::int64_t{hi}); }

// Adds a finite-number check to every floating option of `app` and of its
// subcommands, recursively.
void refuse_non_finite(CLI::App& app);

// Adds to every unsigned whole-number option of `app` and of its
// subcommands, recursively, a check that refuses a negative value and one
// beyond 64 bits (CLI11 converts with strtoull, which turns `--seed -1`
// into 2^64 - 1 and clamps larger numbers to it, silently).
void refuse_negative_unsigned(CLI::App& app);

// One line (no newline, no "mixtd: error: " prefix) for a parse error of `app`:
// which subcommand, the flag, the value and what would be legal.
std::string format_parse_error(const CLI::App& app, const CLI::Error& e);

}  // namespace mixtd::cli
