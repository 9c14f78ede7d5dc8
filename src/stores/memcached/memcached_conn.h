// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The memcached store's connection: one libmemcached handle (one socket per
// server), its settings, and memcached's commands as the store uses them.
// Not thread-safe: the store calls it with its own mutex held, for each
// whole check-then-act sequence.
//
// fork(): a child must not talk on its parent's sockets, and must not free
// the parent's handle either (memcached_free() sends "quit" on every
// connection, which would end the parent's). The child abandons the handle
// and opens its own; the abandoned one's descriptors stay open in the
// child until it exits.

#ifndef IPCLOCK_STORES_MEMCACHED_CONN_H_
#define IPCLOCK_STORES_MEMCACHED_CONN_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ipclock/stores/memcached_store.h"
#include "platform/memcached_calls.h"

namespace ipclock {

// What `gets` found.
struct MemcachedFound {
  bool present = false;
  std::string value;
  uint64_t cas = 0;
};

// "host:port,[v6]:port,/socket": the servers, for messages.
std::string MemcachedServerList(const MemcachedStoreOptions& options);

// Codes that mean the server could not be reached or did not answer.
bool IsMemcachedServerTrouble(memcached_return_t rc);

class MemcachedConn {
 public:
  // `describe` names the store in messages.
  MemcachedConn(const MemcachedStoreOptions& options, std::string describe);
  ~MemcachedConn();
  MemcachedConn(const MemcachedConn&) = delete;
  MemcachedConn& operator=(const MemcachedConn&) = delete;

  // Makes the handle (again in a forked child). True when it made a new
  // one, so that the caller can drop work that belonged to the parent.
  absl::Status Ensure(bool* fresh = nullptr);

  // The servers, for messages: "host:port,host:port" or a socket path.
  const std::string& servers() const { return servers_; }

  // Each command needs Ensure() first.
  memcached_return_t Version();
  memcached_return_t Add(const std::string& key, absl::string_view value, int64_t expiry);
  // MEMCACHED_SUCCESS with found->present false when the key is absent.
  memcached_return_t Gets(const std::string& key, MemcachedFound* found);
  // One multi-get of `keys` (one request to each server that has some):
  // `values` gets the value of each key present; an absent key is missing
  // from it.
  memcached_return_t GetMany(const std::vector<std::string>& keys,
                             absl::flat_hash_map<std::string, std::string>* values);
  memcached_return_t Cas(const std::string& key, absl::string_view value, int64_t expiry,
                         uint64_t cas);
  memcached_return_t Delete(const std::string& key);

  // libmemcached's text for `rc`, with the errno where there is one.
  std::string ErrorText(memcached_return_t rc) const;
  // Each server's own last error, "host:port: why; ...", for a call on
  // every server that some of them failed (MEMCACHED_SOME_ERRORS); empty
  // when none has one.
  std::string ServerErrors() const;
  // A status for `rc` from `what` on the server that holds `key`.
  absl::Status Failure(memcached_return_t rc, absl::string_view resource,
                       absl::string_view what, const std::string& key) const;

 private:
  const MemcachedStoreOptions options_;
  const std::string describe_;
  std::string servers_;
  memcached_st* mc_ = nullptr;
  pid_t mc_pid_ = 0;  // the process that made mc_
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_MEMCACHED_CONN_H_
