// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/zookeeper/zookeeper_names.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "core/hashing.h"
#include "core/store_errors.h"

namespace ipclock {
namespace {

// The sequence the servers append: ten decimal digits.
constexpr size_t kSequenceDigits = 10;

bool KeptAsIs(unsigned char c) {
  return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The next code point of UTF-8 `s` at `*i`, or -1 for an invalid sequence
// (overlong forms and surrogates included).
int32_t NextCodePoint(absl::string_view s, size_t* i) {
  const unsigned char c = static_cast<unsigned char>(s[*i]);
  int len;
  int32_t cp;
  if (c < 0x80) {
    ++*i;
    return c;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return -1;
  }
  if (*i + len > s.size()) return -1;
  for (int k = 1; k < len; ++k) {
    const unsigned char cc = static_cast<unsigned char>(s[*i + k]);
    if ((cc & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (cc & 0x3F);
  }
  static constexpr int32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF) return -1;
  *i += len;
  return cp;
}

}  // namespace

std::string EncodeResourceNode(absl::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (KeptAsIs(c) && !(i == 0 && c == '.')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> DecodeResourceNode(absl::string_view node) {
  std::string out;
  for (size_t i = 0; i < node.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(node[i]);
    if (c != '%') {
      if (!KeptAsIs(c) || (i == 0 && c == '.')) return std::nullopt;
      out.push_back(static_cast<char>(c));
      continue;
    }
    if (i + 2 >= node.size()) return std::nullopt;
    const int hi = HexDigit(node[i + 1]);
    const int lo = HexDigit(node[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const unsigned char byte = static_cast<unsigned char>(hi * 16 + lo);
    // Only the canonical form decodes: a kept byte written as %XX is not a
    // name this store made.
    if (KeptAsIs(byte) && !(i == 0 && byte == '.')) return std::nullopt;
    out.push_back(static_cast<char>(byte));
    i += 2;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

absl::Status ValidZooKeeperName(absl::string_view name, bool at_root) {
  if (name.empty()) return ConfigurationError("an empty node name");
  if (name == "." || name == "..") {
    return ConfigurationError(
        absl::StrCat("ZooKeeper refuses the node name \"", name, "\""));
  }
  if (at_root && name == "zookeeper") {
    return ConfigurationError(
        "/zookeeper is ZooKeeper's own node; a lock cannot use it");
  }
  for (size_t i = 0; i < name.size();) {
    const int32_t cp = NextCodePoint(name, &i);
    if (cp < 0) {
      return ConfigurationError(
          "ZooKeeper node names are UTF-8; this name is not valid UTF-8");
    }
    if (cp == '/') {
      return ConfigurationError("a node name cannot hold '/'");
    }
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0xD800 && cp <= 0xF8FF) ||
        (cp >= 0xFFF0 && cp <= 0xFFFF)) {
      return ConfigurationError(absl::StrCat(
          "ZooKeeper refuses node names with control or reserved characters "
          "(here U+", absl::Hex(cp, absl::kZeroPad4), ")"));
    }
  }
  return absl::OkStatus();
}

std::string SymfonyNodeName(absl::string_view resource) {
  if (resource.find('/') == absl::string_view::npos) return std::string(resource);
  return absl::StrCat(absl::StrReplaceAll(resource, {{"/", "-"}}), "-",
                      ToHex(Sha1(resource)));
}

std::string LockChildPrefix(LockMode mode, absl::string_view tag) {
  return absl::StrCat(mode == LockMode::kExclusive ? kWritePrefix : kReadPrefix, tag, "-");
}

std::optional<LockChild> ParseLockChild(absl::string_view name) {
  LockChild child;
  absl::string_view rest = name;
  if (absl::ConsumePrefix(&rest, kWritePrefix)) {
    child.mode = LockMode::kExclusive;
  } else if (absl::ConsumePrefix(&rest, kReadPrefix)) {
    child.mode = LockMode::kShared;
  } else {
    return std::nullopt;
  }
  if (rest.size() < kSequenceDigits + 2) return std::nullopt;
  const absl::string_view digits = rest.substr(rest.size() - kSequenceDigits);
  if (rest[rest.size() - kSequenceDigits - 1] != '-') return std::nullopt;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  if (!absl::SimpleAtoi(digits, &child.sequence)) return std::nullopt;
  child.tag = std::string(rest.substr(0, rest.size() - kSequenceDigits - 1));
  child.name = std::string(name);
  return child;
}

std::vector<LockChild> SortedLockChildren(const std::vector<std::string>& names) {
  std::vector<LockChild> out;
  for (const std::string& n : names) {
    if (std::optional<LockChild> c = ParseLockChild(n)) out.push_back(*std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const LockChild& a, const LockChild& b) {
    return a.sequence < b.sequence;
  });
  return out;
}

std::optional<LockChild> Blocker(const std::vector<LockChild>& sorted, const LockChild& me) {
  std::optional<LockChild> blocker;
  for (const LockChild& c : sorted) {
    if (c.sequence >= me.sequence) break;
    if (me.mode == LockMode::kExclusive || c.mode == LockMode::kExclusive) blocker = c;
  }
  return blocker;
}

size_t HolderCount(const std::vector<LockChild>& sorted) {
  if (sorted.empty()) return 0;
  if (sorted[0].mode == LockMode::kExclusive) return 1;
  size_t n = 0;
  while (n < sorted.size() && sorted[n].mode == LockMode::kShared) ++n;
  return n;
}

}  // namespace ipclock
