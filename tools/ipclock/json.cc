// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "json.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace ipclock_cli {

namespace {

// The length of the valid UTF-8 sequence at the start of `s`, or 0.
size_t Utf8SequenceLength(absl::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  size_t n;
  uint32_t min;
  if (b0 < 0x80) return 1;
  if ((b0 & 0xe0) == 0xc0) {
    n = 2;
    min = 0x80;
  } else if ((b0 & 0xf0) == 0xe0) {
    n = 3;
    min = 0x800;
  } else if ((b0 & 0xf8) == 0xf0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  uint32_t cp = b0 & (0x7f >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3f);
  }
  // Overlong forms, surrogates and code points past Unicode are invalid.
  if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return n;
}

}  // namespace

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  while (!text.empty()) {
    const char c = text[0];
    const size_t n = Utf8SequenceLength(text);
    if (n == 0) {
      out += "\\ufffd";
      text.remove_prefix(1);
      continue;
    }
    if (n > 1) {
      out.append(text.data(), n);
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
    text.remove_prefix(n);
  }
  out += '"';
  return out;
}

void JsonObject::Key(absl::string_view key) {
  if (!members_.empty()) members_ += ",";
  absl::StrAppend(&members_, JsonString(key), ":");
}

JsonObject& JsonObject::AddString(absl::string_view key, absl::string_view value) {
  Key(key);
  members_ += JsonString(value);
  return *this;
}

JsonObject& JsonObject::AddInt(absl::string_view key, int64_t value) {
  Key(key);
  absl::StrAppend(&members_, value);
  return *this;
}

JsonObject& JsonObject::AddBool(absl::string_view key, bool value) {
  Key(key);
  members_ += value ? "true" : "false";
  return *this;
}

JsonObject& JsonObject::AddInt(absl::string_view key, std::optional<int64_t> value) {
  Key(key);
  members_ += value ? absl::StrCat(*value) : "null";
  return *this;
}

JsonObject& JsonObject::AddRaw(absl::string_view key, absl::string_view json) {
  Key(key);
  absl::StrAppend(&members_, json);
  return *this;
}

std::string JsonArray(const std::vector<std::string>& elements) {
  if (elements.empty()) return "[]\n";
  std::string out = "[\n";
  for (size_t i = 0; i < elements.size(); ++i) {
    absl::StrAppend(&out, "  ", elements[i], i + 1 < elements.size() ? ",\n" : "\n");
  }
  out += "]\n";
  return out;
}

}  // namespace ipclock_cli
