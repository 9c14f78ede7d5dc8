// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The etcd store's key layout (include/ipclock/stores/etcd_store.h), apart from
// any connection so that it can be tested alone and shared with `ipclock
// list`. For resource R under prefix `prefix`:
//
//   P = prefix/ENC(R)          the owner record (exclusive holders)
//   P/<lease hex>              an exclusive lock (concurrency.Mutex)
//   P/read/<unique>            a shared lock (recipe.RWMutex's readers)
//   P/write/<unique>           recipe.RWMutex's writers (never ours)
//
// ENC keeps every byte but '%' and '/', written %25 and %2F: a resource's
// keys then never lie under another's `P/`, so that no lock waits for a
// stranger (with '/' kept, resource "a"'s queue would hold "a/b"'s keys).

#ifndef IPCLOCK_STORES_ETCD_NAMES_H_
#define IPCLOCK_STORES_ETCD_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace ipclock {

std::string EncodeEtcdResource(absl::string_view resource);
// The inverse; nullopt for text EncodeEtcdResource() cannot produce.
std::optional<std::string> DecodeEtcdResource(absl::string_view encoded);

// The first key after every key that starts with `prefix`: the end of the
// range of "every key with this prefix" (etcd's GetPrefixRangeEnd).
std::string EtcdPrefixEnd(absl::string_view prefix);

// A lease ID as concurrency.Mutex writes it in its key (Go's %x).
std::string LeaseHex(int64_t lease);

inline constexpr absl::string_view kEtcdReaderDir = "read/";

// The keys of one resource.
struct EtcdLockKeys {
  std::string record;       // P
  std::string queue;        // P/  (every lock key starts with it)
  std::string queue_end;    // EtcdPrefixEnd(P/)
  std::string readers;      // P/read/
  std::string readers_end;  // EtcdPrefixEnd(P/read/)

  std::string MutexKey(int64_t lease) const { return queue + LeaseHex(lease); }
  bool IsReader(absl::string_view key) const;
};

// `prefix` without leading or trailing '/'; empty for none.
EtcdLockKeys KeysOf(absl::string_view prefix, absl::string_view resource);

// What a key under `prefix/` is, for `ipclock list`.
struct EtcdKeyName {
  std::string resource;     // decoded; empty if it does not decode
  std::string encoded;      // ENC(R) as found
  bool record = false;      // P itself
  bool reader = false;      // P/read/...
  std::string lock_name;    // what follows P/ ("694d...", "read/1700...")
};
// nullopt for a key that is not under `prefix` in this layout.
std::optional<EtcdKeyName> ParseEtcdKey(absl::string_view prefix, absl::string_view key);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ETCD_NAMES_H_
