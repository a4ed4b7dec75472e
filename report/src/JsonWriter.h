// A small deterministic JSON writer: keys in the order written, two-space
// indentation, numbers by format_number(), strings by json_string().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mixtd/report/Format.h"

namespace mixtd::report {

class JsonWriter {
 public:
  JsonWriter& key(std::string_view k) {
    before_value();
    out_ += json_string(k) + ": ";
    after_key_ = true;
    return *this;
  }
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void value(double v) { raw(format_number(v)); }
  void value(int v) { raw(std::to_string(v)); }
  void value(std::int64_t v) { raw(format_number(v)); }
  void value(bool v) { raw(v ? "true" : "false"); }
  void value(std::string_view s) { raw(json_string(s)); }
  void value(const char* s) { raw(json_string(s)); }
  void value(const std::string& s) { raw(json_string(s)); }
  void value(const std::optional<double>& v) { v ? value(*v) : null(); }
  void value(const std::optional<std::int64_t>& v) { v ? value(*v) : null(); }
  void null() { raw("null"); }
  std::string take() { return std::move(out_) + "\n"; }

 private:
  // Before an element: a comma after its predecessor, a new line, the indent.
  void before_value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    out_ += '\n' + std::string(2 * first_.size(), ' ');
  }
  void raw(const std::string& s) {
    before_value();
    out_ += s;
  }
  void open(char c) {
    before_value();
    out_ += c;
    first_.push_back(true);
  }
  void close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) out_ += '\n' + std::string(2 * first_.size(), ' ');
    out_ += c;
  }
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace mixtd::report
