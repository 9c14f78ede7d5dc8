// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Digests used to name locks in the peers' formats (mbedTLS underneath).

#ifndef IPCLOCK_CORE_HASHING_H_
#define IPCLOCK_CORE_HASHING_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace ipclock {

using Sha256Digest = std::array<uint8_t, 32>;
using Md5Digest = std::array<uint8_t, 16>;
using Sha1Digest = std::array<uint8_t, 20>;

Sha256Digest Sha256(absl::string_view data);
Md5Digest Md5(absl::string_view data);
// SHA-1, for MySQL lock names in Laravel's scheme (SQL's SHA1()) and
// Symfony's ZooKeeper node names; never for security.
Sha1Digest Sha1(absl::string_view data);
// HMAC-SHA256 of `data` under `secret`.
Sha256Digest HmacSha256(absl::string_view secret, absl::string_view data);

// Lowercase hex of a digest.
template <size_t N>
std::string ToHex(const std::array<uint8_t, N>& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * N, '0');
  for (size_t i = 0; i < N; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace ipclock

#endif  // IPCLOCK_CORE_HASHING_H_
