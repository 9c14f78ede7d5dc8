// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The IPC key of a resource, as Symfony's SemaphoreStore derives it with
// PHP's unpack('i', digest): the first four bytes in the machine's order,
// which is little-endian on x86 and ARM Linux. They are read as
// little-endian whatever the host, so that one resource has one key on
// every machine ipclock runs on (PHP on a big-endian host would differ).

#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "core/hashing.h"
#include "core/store_errors.h"
#include "ipclock/stores/semaphore_store.h"
#include "ipclock_config.h"

#if IPCLOCK_HAVE_XXHASH
#include <xxhash.h>
#endif

namespace ipclock {

namespace {

int32_t LittleEndianInt32(const uint8_t* bytes) {
  uint32_t u = static_cast<uint32_t>(bytes[0]) |
               (static_cast<uint32_t>(bytes[1]) << 8) |
               (static_cast<uint32_t>(bytes[2]) << 16) |
               (static_cast<uint32_t>(bytes[3]) << 24);
  int32_t out;
  memcpy(&out, &u, sizeof(out));
  return out;
}

}  // namespace

absl::StatusOr<int32_t> SemaphoreIpcKey(absl::string_view resource,
                                        SemaphoreKeyScheme scheme) {
  if (scheme == SemaphoreKeyScheme::kMd5) {
    Md5Digest d = Md5(resource);
    return LittleEndianInt32(d.data());
  }
#if IPCLOCK_HAVE_XXHASH
  XXH128_hash_t h = XXH3_128bits(resource.data(), resource.size());
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, h);
  return LittleEndianInt32(canonical.digest);
#else
  return NotBuiltError(
      "semaphore: key_scheme=xxh3 needs libxxhash, which this build was "
      "configured without (install libxxhash-dev and reconfigure)");
#endif
}

}  // namespace ipclock
