// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/flock/flock_naming.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/hashing.h"

namespace ipclock {

namespace {

constexpr size_t kMaxReadableBytes = 50;
constexpr size_t kHashChars = 7;
constexpr size_t kHashSourceBytes = 6;  // ceil(7 * 6 bits / 8)

bool KeptByte(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string SymfonyFlockFileName(absl::string_view resource) {
  std::string readable;
  readable.reserve(std::min(resource.size(), kMaxReadableBytes + 1));
  bool in_run = false;
  for (char c : resource) {
    if (KeptByte(c)) {
      readable.push_back(c);
      in_run = false;
    } else if (!in_run) {
      readable.push_back('-');
      in_run = true;
    }
    // Bytes past the cut cannot change what is kept, so stop early.
    if (readable.size() > kMaxReadableBytes) break;
  }
  if (readable.size() > kMaxReadableBytes) readable.resize(kMaxReadableBytes);

  // The 7 characters carry 42 bits, all from the digest's first 6 bytes:
  // encoding only those gives the same characters without a copy of the rest.
  Sha256Digest digest = Sha256(resource);
  std::string hash = absl::Base64Escape(absl::string_view(
      reinterpret_cast<const char*>(digest.data()), kHashSourceBytes));
  hash.resize(kHashChars);
  std::replace(hash.begin(), hash.end(), '/', '_');
  return absl::StrCat("sf.", readable, ".", hash, ".lock");
}

}  // namespace ipclock
