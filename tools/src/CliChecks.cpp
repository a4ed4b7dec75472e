#include "CliChecks.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <vector>

#include "mixtd/support/Error.h"

namespace mixtd::cli {

namespace {

// Marks a message written by the validators below: format_parse_error turns
// CLI11's "NAME: <mark>VALUE: why" into "NAME VALUE: why".
constexpr char kMark = '\x1f';

std::string number(double v) {
  std::ostringstream s;
  s.precision(15);
  s << v;
  return s.str();
}

bool parse_double(const std::string& text, double& v) {
  if (text.empty()) return false;
  char* end = nullptr;
  v = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// The subcommand chain that was being parsed ("dataset generate"), or "".
std::string parsed_path(const CLI::App& app, const CLI::App** deepest) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->parsed() && !sub->get_name().empty()) {
      const std::string rest = parsed_path(*sub, deepest);
      if (*deepest == nullptr) *deepest = sub;
      return sub->get_name() + (rest.empty() ? "" : " " + rest);
    }
  }
  return "";
}

std::string legal_subcommands(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  return join(names);
}

std::string type_words(const CLI::App& app, const std::string& name) {
  std::string type;
  try {
    if (const CLI::Option* o = app.get_option_no_throw(name)) type = o->get_type_name();
  } catch (const CLI::Error&) {
  }
  if (type.rfind("INT", 0) == 0) return "a whole number";
  if (type.rfind("UINT", 0) == 0) return "a non-negative whole number";
  if (type.rfind("FLOAT", 0) == 0) return "a number";
  return "a legal value";
}

}  // namespace

CLI::Validator in_range(std::int64_t lo, std::int64_t hi) {
  const std::string legal = "legal " + std::to_string(lo) + " .. " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, legal](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || p != end) return kMark + text + ": not a whole number; " + legal;
        if (v < lo || v > hi) return kMark + text + ": " + legal;
        return {};
      },
      "[" + std::to_string(lo) + " .. " + std::to_string(hi) + "]");
}

CLI::Validator in_range(double lo, double hi) {
  const std::string legal = "legal " + number(lo) + " .. " + number(hi);
  return CLI::Validator(
      [lo, hi, legal](std::string& text) -> std::string {
        double v = 0;
        if (!parse_double(text, v)) return kMark + text + ": not a number; " + legal;
        if (!std::isfinite(v)) return kMark + text + ": not a finite number; " + legal;
        if (v < lo || v > hi) return kMark + text + ": " + legal;
        return {};
      },
      "[" + number(lo) + " .. " + number(hi) + "]");
}

CLI::Validator device_fraction() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        if (!parse_double(text, v) || !std::isfinite(v) || v <= 0 || v > 1)
          return kMark + text + ": must be a fraction of the device in (0, 1]";
        return {};
      },
      "(0 .. 1]");
}

void refuse_non_finite(CLI::App& app) {
  const CLI::Validator finite(
      [](std::string& text) -> std::string {
        double v = 0;
        if (parse_double(text, v) && !std::isfinite(v)) return kMark + text + ": not a finite number";
        return {};  // anything else is for CLI11's conversion to judge
      },
      "", "finite");
  for (CLI::Option* o : app.get_options())
    if (o->get_type_name().rfind("FLOAT", 0) == 0) o->check(finite);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_non_finite(*sub);
}

void refuse_negative_unsigned(CLI::App& app) {
  const CLI::Validator non_negative(
      [](std::string& text) -> std::string {
        const auto first = text.find_first_not_of(" \t\n\v\f\r");
        if (first != std::string::npos && text[first] == '-') return kMark + text + ": not a non-negative whole number";
        errno = 0;
        char* end = nullptr;
        (void)std::strtoull(text.c_str(), &end, 0);
        if (errno == ERANGE) return kMark + text + ": too large (more than 64 bits)";
        return {};  // anything else is for CLI11's conversion (and in_range) to judge
      },
      "", "non-negative");
  for (CLI::Option* o : app.get_options())
    if (o->get_type_name().rfind("UINT", 0) == 0) o->check(non_negative);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_negative_unsigned(*sub);
}

std::string format_parse_error(const CLI::App& app, const CLI::Error& e) {
  const CLI::App* deepest = nullptr;
  const std::string path = parsed_path(app, &deepest);
  const CLI::App& where = deepest ? *deepest : app;
  const std::string help = "`mixtd" + (path.empty() ? "" : " " + path) + " --help`";
  std::string what = e.what();
  std::smatch m;

  if (what.find("A subcommand") == 0 || what.find("Requires at least") == 0) {
    // The first left-over word is what the user meant as a subcommand.
    const std::vector<std::string> left = where.remaining();
    const std::string legal = "legal " + legal_subcommands(where);
    if (left.empty())
      what = "a subcommand is needed: " + legal;
    else if (left.front().rfind('-', 0) == 0)
      what = "unknown option '" + left.front() + "' before a subcommand: " + legal;
    else
      what = "unknown subcommand '" + left.front() + "': " + legal;
  } else if (const auto mark = what.find(std::string(": ") + kMark); mark != std::string::npos) {
    what = what.substr(0, mark) + " " + what.substr(mark + 3);
  } else if (std::regex_match(what, m, std::regex("(\\S+): File does not exist: (.*)"))) {
    what = m[1].str() + " " + m[2].str() + ": no such file";
  } else if (std::regex_match(what, m, std::regex("(\\S+): File is actually a directory: (.*)"))) {
    what = m[1].str() + " " + m[2].str() + ": is a folder, a file is needed";
  } else if (std::regex_match(what, m, std::regex("(\\S+): (.*) not in \\{(.*)\\}"))) {
    std::string legal = m[3].str();
    for (auto& c : legal)
      if (c == ',') c = '|';
    what = m[1].str() + " " + m[2].str() + ": legal " + legal;
  } else if (std::regex_match(what, m, std::regex("Could not convert: (\\S+) = (.*)"))) {
    double v = 0;
    what = m[1].str() + " " + m[2].str() + ": " + (parse_double(m[2].str(), v) ? "too large or not " : "not ") +
           type_words(where, m[1].str());
  } else if (std::regex_match(what, m, std::regex("The value (.*) is not an allowed value for (\\S+)"))) {
    what = m[2].str() + " " + m[1].str() + ": not " + type_words(where, m[2].str());
  } else if (std::regex_match(what, m, std::regex("The following arguments? (?:was|were) not expected: (.*)"))) {
    what = "unexpected argument(s) " + m[1].str() + " (see " + help + ")";
  } else if (std::regex_match(what, m, std::regex("(\\S+): (\\d+) required ([A-Z]+).* missing"))) {
    what = m[1].str() + " needs a value (" + m[3].str() + ")";
  }
  for (auto& c : what)
    if (c == '\n') c = ' ';
  return path.empty() ? what : path + ": " + what;
}

}  // namespace mixtd::cli
