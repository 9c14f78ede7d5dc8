// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The digests behind PostgresLockId() (include/ipclock/stores/postgres_store.h),
// exposed for their test vectors. No libpq: these are in every build.

#ifndef IPCLOCK_STORES_POSTGRES_LOCK_ID_H_
#define IPCLOCK_STORES_POSTGRES_LOCK_ID_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "ipclock/stores/postgres_store.h"

namespace ipclock {

// CRC-32 as zlib and PHP's crc32() compute it (IEEE 802.3, reflected,
// polynomial 0xEDB88320, initial and final XOR 0xFFFFFFFF).
uint32_t Crc32Ieee(absl::string_view data);

// PostgreSQL's hashtext(): hash_bytes() of src/common/hashfn.c over the raw
// bytes, as a little-endian server computes it.
int32_t PostgresHashText(absl::string_view data);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSTGRES_LOCK_ID_H_
