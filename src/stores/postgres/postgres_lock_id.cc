// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Lock-id schemes of the postgres store: see PostgresLockIdScheme.

#include "stores/postgres/postgres_lock_id.h"

#include <array>

#include "core/hashing.h"

namespace ipclock {

namespace {

constexpr std::array<uint32_t, 256> MakeCrc32Table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t r = i;
    for (int bit = 0; bit < 8; ++bit) {
      r = (r & 1) != 0 ? (r >> 1) ^ 0xEDB88320u : r >> 1;
    }
    table[i] = r;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kCrc32Table = MakeCrc32Table();

constexpr uint32_t Rotl(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

uint32_t Le32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

uint32_t Crc32Ieee(absl::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) {
    crc = kCrc32Table[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  }
  return crc ^ 0xFFFFFFFFu;
}

// PostgreSQL's variant of Bob Jenkins' lookup3 hashlittle(): the same mix
// and final steps, but a different initial value, and the final step runs
// even for an empty input. The server reads 12-byte blocks in its native
// byte order, so a big-endian server gives other values; the little-endian
// reading here matches x86 and ARM servers (the test compares with the
// server itself).
int32_t PostgresHashText(absl::string_view data) {
  const auto* k = reinterpret_cast<const unsigned char*>(data.data());
  size_t len = data.size();
  uint32_t a = 0x9e3779b9u + static_cast<uint32_t>(len) + 3923095u;
  uint32_t b = a;
  uint32_t c = a;
  while (len >= 12) {
    a += Le32(k);
    b += Le32(k + 4);
    c += Le32(k + 8);
    a -= c; a ^= Rotl(c, 4);  c += b;
    b -= a; b ^= Rotl(a, 6);  a += c;
    c -= b; c ^= Rotl(b, 8);  b += a;
    a -= c; a ^= Rotl(c, 16); c += b;
    b -= a; b ^= Rotl(a, 19); a += c;
    c -= b; c ^= Rotl(b, 4);  b += a;
    k += 12;
    len -= 12;
  }
  // The tail: bytes 0..3 into a, 4..7 into b, 8..10 into c one byte up (the
  // low byte of c is left to the length, as in lookup3).
  for (size_t i = len; i-- > 0;) {
    const uint32_t byte = k[i];
    if (i < 4) {
      a += byte << (8 * i);
    } else if (i < 8) {
      b += byte << (8 * (i - 4));
    } else {
      c += byte << (8 * (i - 7));
    }
  }
  c ^= b; c -= Rotl(b, 14);
  a ^= c; a -= Rotl(c, 11);
  b ^= a; b -= Rotl(a, 25);
  c ^= b; c -= Rotl(b, 16);
  a ^= c; a -= Rotl(c, 4);
  b ^= a; b -= Rotl(a, 14);
  c ^= b; c -= Rotl(b, 24);
  return static_cast<int32_t>(c);
}

int64_t PostgresLockId(absl::string_view resource, PostgresLockIdScheme scheme) {
  switch (scheme) {
    case PostgresLockIdScheme::kSymfony:
      return static_cast<int64_t>(Crc32Ieee(resource));
    case PostgresLockIdScheme::kLaravel:
      return static_cast<int64_t>(PostgresHashText(resource));
    case PostgresLockIdScheme::kNative:
      break;
  }
  const Sha256Digest digest = Sha256(resource);
  uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id = id << 8 | digest[i];
  return static_cast<int64_t>(id);
}

}  // namespace ipclock
