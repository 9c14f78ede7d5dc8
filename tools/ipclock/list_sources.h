// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What `ipclock list` finds in each store. Each lister reads what the OS and
// the store's own files say, never takes or tries a lock (a probe would
// itself be a holder for an instant), and creates nothing: listing a store
// that does not exist yet lists nothing.

#ifndef IPCLOCK_TOOLS_IPCLOCK_LIST_SOURCES_H_
#define IPCLOCK_TOOLS_IPCLOCK_LIST_SOURCES_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ipclock/semaphore_store.h"

namespace ipclock_cli {

// One holder of one lock (a shared lock held by three processes is three
// rows), or a lock whose holder died and that its next holder will hear
// about.
struct LockRow {
  // The resource as far as the store can tell: the name, the readable part
  // of a lock file name, or empty where only a hash is kept.
  std::string resource;
  // Where the lock lives: a file name, a slot, a semaphore set.
  std::string object;
  // "exclusive", "shared", "permit" (counting stores), or "holder died".
  std::string mode;
  pid_t pid = 0;  // 0: unknown
  std::string command;  // /proc/PID/comm; empty when unknown or gone
  std::optional<int64_t> since;  // Unix seconds
  // How `since` is known, for the reader to weigh it.
  std::string since_source;
  std::optional<int64_t> fence;
  std::optional<int64_t> waiters;
  // Store-specific facts, as name and value; numbers stay numbers in JSON.
  std::vector<std::pair<std::string, std::string>> text_details;
  std::vector<std::pair<std::string, int64_t>> number_details;
};

// Locks on the lock files in `dir` (Symfony names unless `any_file`: then
// every regular file there, as `naming=path` stores lock them), from
// /proc/locks.
absl::StatusOr<std::vector<LockRow>> ListFlockDir(const std::string& dir,
                                                  bool any_file);

// Held slots of the shm segment `name`.
absl::StatusOr<std::vector<LockRow>> ListShmSegment(const std::string& name);

// Held SysV semaphore sets that have Symfony's layout (3 semaphores) or
// ipclock's (5). Only the set of `key_resource`'s IPC key when it is given,
// since only then can the resource be named.
absl::StatusOr<std::vector<LockRow>> ListSysvSemaphores(
    const std::optional<std::string>& key_resource,
    ipclock::SemaphoreKeyScheme scheme);

// Held permits of the posix-semaphore store with `prefix`, from the
// registries in /dev/shm; only `key_resource`'s when given.
absl::StatusOr<std::vector<LockRow>> ListPosixSemaphores(
    const std::optional<std::string>& key_resource, const std::string& prefix);

// /proc/PID/comm, or empty.
std::string CommandName(pid_t pid);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_LIST_SOURCES_H_
