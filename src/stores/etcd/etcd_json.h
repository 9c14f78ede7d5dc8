// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Just enough JSON for etcd's gRPC gateway: its replies are parsed into a
// tree of `JsonValue`s; its requests are built with StrCat, since every
// field ipclock sends is a number or base64 text, which needs no escaping.
//
// The parser takes RFC 8259 JSON (any nesting up to 64 levels, \u escapes
// with surrogate pairs, numbers kept as their text) and refuses anything
// else with InvalidArgument: a reply from a server is untrusted input.
// etcd writes 64-bit integers as strings ("revision": "42"); `AsInt()`
// reads either form.

#ifndef IPCLOCK_STORES_ETCD_JSON_H_
#define IPCLOCK_STORES_ETCD_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ipclock {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  static absl::StatusOr<JsonValue> Parse(absl::string_view text);

  Type type() const { return type_; }
  bool is_object() const { return type_ == Type::kObject; }

  // A member of an object, or nullptr (also when this is not an object).
  const JsonValue* Find(absl::string_view name) const;
  // The elements of an array (empty for anything else).
  const std::vector<JsonValue>& items() const { return items_; }
  // A string's value, a number's text; empty for the others.
  const std::string& text() const { return text_; }
  bool boolean() const { return type_ == Type::kBool && boolean_; }

  // A number, or a string holding a decimal integer (etcd's int64s), that
  // fits an int64_t.
  std::optional<int64_t> AsInt() const;

  // Shorthands for a member: its integer (`fallback` when absent, which is
  // how the gateway writes zero), its string, its boolean.
  int64_t IntOf(absl::string_view name, int64_t fallback = 0) const;
  std::string StringOf(absl::string_view name) const;
  bool BoolOf(absl::string_view name) const;

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool boolean_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ETCD_JSON_H_
