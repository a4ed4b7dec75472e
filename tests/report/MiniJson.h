// A tiny strict JSON parser for the report's tests (RFC 8259: no trailing
// commas, no leading zeros, no NaN, the whole text one value). Numbers keep
// their text, so a test can look for that exact text elsewhere.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace minijson {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  std::string text;  // a number's text, a string's (unescaped) value
  bool boolean = false;
  std::vector<Value> items;                           // Array
  std::vector<std::pair<std::string, Value>> fields;  // Object, in order

  const Value& at(const std::string& key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return v;
    throw std::out_of_range("no key " + key);
  }
  double number() const { return std::strtod(text.c_str(), nullptr); }
};

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  Value parse() {
    Value v = value();
    ws();
    if (i_ != s_.size()) fail("trailing text");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("JSON: " + what + " at " + std::to_string(i_));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool eat(const std::string& t) {
    if (s_.compare(i_, t.size(), t) != 0) return false;
    i_ += t.size();
    return true;
  }
  bool digit() const { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; }
  Value value() {
    ws();
    Value v;
    if (i_ >= s_.size()) fail("end of text");
    const char c = s_[i_];
    if (eat("null")) return v;
    if (eat("true") || eat("false")) {
      v.kind = Value::Bool, v.boolean = s_[i_ - 1] == 'e' && s_[i_ - 2] == 'u';  // "true", not "false"
      return v;
    }
    if (c == '"') {
      v.kind = Value::String, v.text = string();
      return v;
    }
    if (c == '[' || c == '{') {
      ++i_;
      v.kind = c == '[' ? Value::Array : Value::Object;
      ws();
      if (eat(c == '[' ? "]" : "}")) return v;
      for (;;) {
        if (c == '[') {
          v.items.push_back(value());
        } else {
          ws();
          if (i_ >= s_.size() || s_[i_] != '"') fail("key expected");
          std::string k = string();
          ws();
          if (!eat(":")) fail("':' expected");
          v.fields.emplace_back(std::move(k), value());
        }
        ws();
        if (eat(",")) continue;
        if (eat(c == '[' ? "]" : "}")) return v;
        fail("',' or end expected");
      }
    }
    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    const std::size_t start = i_;
    eat("-");
    if (eat("0")) {
      if (digit()) fail("leading zero");
    } else if (digit()) {
      while (digit()) ++i_;
    } else {
      fail("value expected");
    }
    if (eat(".")) {
      if (!digit()) fail("digit expected");
      while (digit()) ++i_;
    }
    if (eat("e") || eat("E")) {
      if (!eat("+")) eat("-");
      if (!digit()) fail("digit expected");
      while (digit()) ++i_;
    }
    v.kind = Value::Number, v.text = s_.substr(start, i_ - start);
    return v;
  }
  std::string string() {
    ++i_;  // the opening quote
    std::string o;
    while (i_ < s_.size() && s_[i_] != '"') {
      const char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        o += c;
        continue;
      }
      if (i_ >= s_.size()) fail("end in escape");
      const char e = s_[i_++];
      const std::string simple = "\"\\/bfnrt", to = "\"\\/\b\f\n\r\t";
      if (const auto k = simple.find(e); k != std::string::npos) {
        o += to[k];
      } else if (e == 'u' && i_ + 4 <= s_.size() &&
                 s_.substr(i_, 4).find_first_not_of("0123456789abcdefABCDEF") == std::string::npos) {
        const long cp = std::strtol(s_.substr(i_, 4).c_str(), nullptr, 16);
        i_ += 4;
        if (cp >= 0x80) fail("only ASCII \\u escapes expected");
        o += static_cast<char>(cp);
      } else {
        fail("bad escape");
      }
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return o;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

inline Value parse(const std::string& s) { return Parser(s).parse(); }

}  // namespace minijson
