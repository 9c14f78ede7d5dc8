// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Node names of the ZooKeeper store (include/ipclock/stores/zookeeper_store.h) and
// the lock recipe's ordering rules, apart from any session so that they can
// be tested alone and shared with `ipclock list`.
//
// ZooKeeper's rules for a node name (PathUtils.validatePath on the servers):
// UTF-8, no NUL, no U+0001..U+001F, U+007F..U+009F, U+D800..U+F8FF or
// U+FFF0..U+FFFF, not "." or "..". The C client checks only part of this;
// a name the servers refuse comes back as ZBADARGUMENTS, so both formats
// check here first.

#ifndef IPCLOCK_STORES_ZOOKEEPER_NAMES_H_
#define IPCLOCK_STORES_ZOOKEEPER_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/store.h"

namespace ipclock {

// Recipe format: the resource node's name. Bytes in [A-Za-z0-9._-] stay,
// every other byte becomes %XX (uppercase hex), and so does a leading '.',
// so that "." and ".." cannot occur. Any byte string gives a valid name,
// and distinct strings give distinct names.
std::string EncodeResourceNode(absl::string_view name);
// The inverse; nullopt for a name EncodeResourceNode() cannot produce.
std::optional<std::string> DecodeResourceNode(absl::string_view node);

// Symfony format: the node name Symfony's ZookeeperStore gives `resource`
// (with '/', the resource with '/' as '-', then '-', then its SHA-1 in hex).
// InvalidArgument, naming the reason, when the servers would refuse it;
// `at_root` also refuses "zookeeper", ZooKeeper's own node.
absl::Status ValidZooKeeperName(absl::string_view name, bool at_root);
std::string SymfonyNodeName(absl::string_view resource);

// Recipe format: one child of a resource node.
struct LockChild {
  std::string name;  // "write-TAG-0000000012"
  LockMode mode = LockMode::kExclusive;
  std::string tag;   // the acquisition attempt's random tag
  int64_t sequence = 0;
};

inline constexpr absl::string_view kWritePrefix = "write-";
inline constexpr absl::string_view kReadPrefix = "read-";
// The persistent child an exclusive holder leaves while it holds the lock.
inline constexpr absl::string_view kOwnerNode = "owner";

// The name to create (the server appends the 10-digit sequence).
std::string LockChildPrefix(LockMode mode, absl::string_view tag);
// nullopt for a child that is not a lock node ("owner", or a stranger's).
std::optional<LockChild> ParseLockChild(absl::string_view name);
// The lock children of `names`, lowest sequence first.
std::vector<LockChild> SortedLockChildren(const std::vector<std::string>& names);

// The node that keeps `me` from holding the lock: for a writer the next
// lower node of any kind, for a reader the next lower writer; nullopt when
// `me` holds it. `sorted` is SortedLockChildren(); `me` must be in it.
std::optional<LockChild> Blocker(const std::vector<LockChild>& sorted,
                                 const LockChild& me);

// How many of `sorted` hold the lock now: the leading readers, or the first
// writer.
size_t HolderCount(const std::vector<LockChild>& sorted);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ZOOKEEPER_NAMES_H_
