// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Laravel's MySQL lock names, computed as the server computes them.

#include "stores/mysql/mysql_lock_name.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/hashing.h"
#include "ipclock/stores/mysql_store.h"

namespace ipclock {

namespace {

// Laravel hashes names longer than this many characters (MySQL's limit).
constexpr size_t kLongestPlainName = 64;
// A hashed name keeps this many leading characters before the SHA-1 hex.
constexpr size_t kHashedPrefix = 24;

// The length of the UTF-8 sequence that starts at `s[i]`, or 0 if it is
// not a valid one.
size_t SequenceLength(absl::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    len = 2;
    cp = b0 & 0x1f;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    len = 3;
    cp = b0 & 0x0f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return 0;  // a continuation byte, 0xc0/0xc1 (overlong), or 0xf5+
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;  // overlong
  if (cp >= 0xd800 && cp <= 0xdfff) return 0;  // a surrogate
  if (cp > 0x10ffff) return 0;
  return len;
}

}  // namespace

std::optional<size_t> Utf8Length(absl::string_view text) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t len = SequenceLength(text, i);
    if (len == 0) return std::nullopt;
    i += len;
    ++chars;
  }
  return chars;
}

size_t Utf8PrefixBytes(absl::string_view text, size_t chars) {
  size_t i = 0;
  for (size_t c = 0; c < chars && i < text.size(); ++c) {
    const size_t len = SequenceLength(text, i);
    i += len == 0 ? 1 : len;
  }
  return i;
}

std::string MysqlLockName(absl::string_view resource) {
  const std::optional<size_t> chars = Utf8Length(resource);
  const bool text = chars.has_value() && resource.find('\0') == absl::string_view::npos;
  if (text) {
    if (*chars <= kLongestPlainName) return std::string(resource);
    return absl::StrCat(resource.substr(0, Utf8PrefixBytes(resource, kHashedPrefix)),
                        ToHex(Sha1(resource)));
  }
  // No Laravel key is invalid UTF-8 or holds a NUL (the server would cut the
  // name there): such a resource takes the hashed form, with U+FFFD for
  // each byte that is not a character (and as padding) in the 24-character
  // prefix. Its name is thus as long as a hashed one and carries the SHA-1
  // of all its bytes, so it meets a Laravel key only through a SHA-1
  // collision.
  constexpr absl::string_view kReplacement = "\xef\xbf\xbd";
  std::string name;
  size_t shown = 0;
  for (size_t i = 0; i < resource.size() && shown < kHashedPrefix; ++shown) {
    const size_t len = SequenceLength(resource, i);
    if (len == 0 || resource[i] == '\0') {
      absl::StrAppend(&name, kReplacement);
      ++i;
    } else {
      absl::StrAppend(&name, resource.substr(i, len));
      i += len;
    }
  }
  for (; shown < kHashedPrefix; ++shown) absl::StrAppend(&name, kReplacement);
  absl::StrAppend(&name, ToHex(Sha1(resource)));
  return name;
}

std::string MysqlSymfonyLockName(absl::string_view resource) {
  return ToHex(Sha256(resource));
}

}  // namespace ipclock
