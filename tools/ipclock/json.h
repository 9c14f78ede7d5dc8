// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Just enough JSON for `ipclock list --json` and `ipclock doctor --json`:
// flat objects of strings, numbers, booleans and nulls, and arrays of them.
// Written by hand so that the CLI needs no JSON library.

#ifndef IPCLOCK_TOOLS_IPCLOCK_JSON_H_
#define IPCLOCK_TOOLS_IPCLOCK_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ipclock_cli {

// `text` as a JSON string, quotes included. Control characters, quotes and
// backslashes are escaped; bytes that are not valid UTF-8 (a lock file name
// may hold any byte but '/') become U+FFFD, so the output always parses.
std::string JsonString(absl::string_view text);

// Builds one object, members in the order they are added.
class JsonObject {
 public:
  JsonObject& AddString(absl::string_view key, absl::string_view value);
  JsonObject& AddInt(absl::string_view key, int64_t value);
  JsonObject& AddBool(absl::string_view key, bool value);
  // null when empty.
  JsonObject& AddInt(absl::string_view key, std::optional<int64_t> value);
  // `json` must be valid JSON (a nested object or array).
  JsonObject& AddRaw(absl::string_view key, absl::string_view json);

  std::string Build() const { return "{" + members_ + "}"; }

 private:
  void Key(absl::string_view key);
  std::string members_;
};

// "[\n  a,\n  b\n]\n": one element per line, for diffs and grep.
std::string JsonArray(const std::vector<std::string>& elements);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_JSON_H_
