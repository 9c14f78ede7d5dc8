// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/etcd/etcd_json.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/store_errors.h"

namespace ipclock {

namespace {
constexpr int kMaxDepth = 64;
}  // namespace

class JsonParser {
 public:
  explicit JsonParser(absl::string_view text) : s_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue v;
    if (!Value(&v, 0)) return Error();
    SkipSpace();
    if (pos_ != s_.size()) {
      why_ = "text after the value";
      return Error();
    }
    return v;
  }

 private:
  absl::Status Error() const {
    return ConfigurationError(
        absl::StrCat("malformed JSON at byte ", pos_, ": ", why_));
  }
  bool Fail(const char* why) {
    why_ = why;
    return false;
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Literal(absl::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return Fail("unknown literal");
    pos_ += word.size();
    return true;
  }

  bool Value(JsonValue* v, int depth) {
    if (depth > kMaxDepth) return Fail("nested too deep");
    SkipSpace();
    if (pos_ >= s_.size()) return Fail("unexpected end");
    const char c = s_[pos_];
    switch (c) {
      case '{':
        return Object(v, depth);
      case '[':
        return Array(v, depth);
      case '"':
        v->type_ = JsonValue::Type::kString;
        return String(&v->text_);
      case 't':
        v->type_ = JsonValue::Type::kBool;
        v->boolean_ = true;
        return Literal("true");
      case 'f':
        v->type_ = JsonValue::Type::kBool;
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Number(v);
        return Fail("unexpected character");
    }
  }

  // Consumes `c` if it comes next.
  bool Take(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  // What follows a member or an item: ',' (`*more`) or `close`, else a
  // failure saying `at_end` or `expected`.
  bool Separator(char close, const char* at_end, const char* expected, bool* more) {
    SkipSpace();
    if (pos_ >= s_.size()) return Fail(at_end);
    *more = Take(',');
    return *more || Take(close) || Fail(expected);
  }

  bool Object(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kObject;
    ++pos_;
    SkipSpace();
    if (Take('}')) return true;
    for (bool more = true; more;) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a member name");
      std::string name;
      if (!String(&name)) return false;
      SkipSpace();
      if (!Take(':')) return Fail("expected ':'");
      JsonValue member;
      if (!Value(&member, depth + 1)) return false;
      v->members_.emplace_back(std::move(name), std::move(member));
      if (!Separator('}', "unexpected end in an object", "expected ',' or '}'", &more)) {
        return false;
      }
    }
    return true;
  }

  bool Array(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kArray;
    ++pos_;
    SkipSpace();
    if (Take(']')) return true;
    for (bool more = true; more;) {
      JsonValue item;
      if (!Value(&item, depth + 1)) return false;
      v->items_.push_back(std::move(item));
      if (!Separator(']', "unexpected end in an array", "expected ',' or ']'", &more)) {
        return false;
      }
    }
    return true;
  }

  bool Number(JsonValue* v) {
    v->type_ = JsonValue::Type::kNumber;
    const size_t start = pos_;
    auto digits = [&]() {
      const size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > from;
    };
    if (s_[pos_] == '-') ++pos_;
    if (!Take('0') && !digits()) return Fail("bad number");
    if (Take('.') && !digits()) return Fail("bad fraction");
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return Fail("bad exponent");
    }
    v->text_ = std::string(s_.substr(start, pos_ - start));
    return true;
  }

  bool Hex4(uint32_t* out) {
    if (pos_ + 4 > s_.size()) return Fail("short \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return Fail("bad \\u escape");
      }
    }
    *out = v;
    return true;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  bool String(std::string* out) {
    ++pos_;  // the opening quote
    for (;;) {
      if (pos_ >= s_.size()) return Fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return Fail("unterminated escape");
      const char e = s_[pos_++];
      // The one-character escapes, and what each stands for.
      static constexpr absl::string_view kEscaped = "\"\\/bfnrt";
      static constexpr absl::string_view kMeant = "\"\\/\b\f\n\r\t";
      if (const size_t i = kEscaped.find(e); i != absl::string_view::npos) {
        out->push_back(kMeant[i]);
        continue;
      }
      if (e != 'u') return Fail("unknown escape");
      uint32_t cp;
      if (!Hex4(&cp)) return false;
      if (cp >= 0xd800 && cp <= 0xdbff) {
        uint32_t low;
        if (s_.substr(pos_, 2) != "\\u") return Fail("lone high surrogate");
        pos_ += 2;
        if (!Hex4(&low)) return false;
        if (low < 0xdc00 || low > 0xdfff) return Fail("bad low surrogate");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      } else if (cp >= 0xdc00 && cp <= 0xdfff) {
        return Fail("lone low surrogate");
      }
      AppendUtf8(cp, out);
    }
  }

  absl::string_view s_;
  size_t pos_ = 0;
  const char* why_ = "";
};

absl::StatusOr<JsonValue> JsonValue::Parse(absl::string_view text) {
  return JsonParser(text).ParseDocument();
}

const JsonValue* JsonValue::Find(absl::string_view name) const {
  for (const auto& m : members_) {
    if (m.first == name) return &m.second;
  }
  return nullptr;
}

std::optional<int64_t> JsonValue::AsInt() const {
  if (type_ != Type::kNumber && type_ != Type::kString) return std::nullopt;
  int64_t v;
  if (!absl::SimpleAtoi(text_, &v)) return std::nullopt;
  return v;
}

int64_t JsonValue::IntOf(absl::string_view name, int64_t fallback) const {
  const JsonValue* m = Find(name);
  if (m == nullptr) return fallback;
  return m->AsInt().value_or(fallback);
}

std::string JsonValue::StringOf(absl::string_view name) const {
  const JsonValue* m = Find(name);
  return m != nullptr && m->type_ == Type::kString ? m->text_ : std::string();
}

bool JsonValue::BoolOf(absl::string_view name) const {
  const JsonValue* m = Find(name);
  return m != nullptr && m->boolean();
}

}  // namespace ipclock
