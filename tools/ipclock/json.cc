// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "json.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "terminal_text.h"

namespace ipclock_cli {

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
    if (IsC1Control(text.substr(0, n))) {
      // Valid JSON either way; escaped so that a terminal shown the output
      // does not obey it.
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned char>(text[1]));
      out += buf;
    } else if (n > 1) {
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
