// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the memcached store is given, checked before libmemcached or the
// server sees it: the store's options (values, limits, each Unix socket's
// path and type, the key naming) and each lock's lease, which memcached
// keeps for 30 days at most. Compiled only with libmemcached (Meson feature
// `memcached`).

#ifndef IPCLOCK_STORES_MEMCACHED_OPTIONS_H_
#define IPCLOCK_STORES_MEMCACHED_OPTIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/key_naming.h"
#include "ipclock/store.h"
#include "ipclock/stores/memcached_store.h"

namespace ipclock {

// NewMemcachedStore()'s checks of `options`, made before libmemcached sees
// them: values, limits, each Unix socket's path and type
// (core/named_file.h), the key naming.
absl::Status CheckMemcachedOptions(const MemcachedStoreOptions& options);

// What a MemcachedStore of `options` can do.
Capabilities MemcachedCapabilities(const MemcachedStoreOptions& options);

// The key naming of `options` (prefix and secret); `where` starts messages.
absl::StatusOr<KeyNaming> MemcachedKeyNaming(const MemcachedStoreOptions& options,
                                             absl::string_view where);

// The expiry to send for a lease of `ttl`: the server's clock ticks once a
// second, so a key stored for N seconds may expire after N-1 of them. One
// second more than the lease keeps the key alive at least as long as the
// client believes it holds the lock.
int64_t MemcachedExpiryFor(absl::Duration ttl);

// InvalidArgument for a lease memcached cannot keep; `describe` names the
// store and `resource` the lock in the message.
absl::Status CheckMemcachedLease(absl::string_view describe, absl::string_view resource,
                                 absl::Duration ttl);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_MEMCACHED_OPTIONS_H_
