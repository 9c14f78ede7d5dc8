// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What a lock on a shared server says about its holder, for `ipclock list`
// on another host or process: "ipclock host=H pid=P" (the ZooKeeper
// recipe's node data, the etcd store's owner record). The pid means
// something only on host H.

#ifndef IPCLOCK_STORES_HOLDER_NOTE_H_
#define IPCLOCK_STORES_HOLDER_NOTE_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "ipclock/admin/inspect.h"

namespace ipclock {

// This host's name (/proc/sys/kernel/hostname), or "?".
std::string LocalHostName();

// "ipclock host=<this host> pid=": the note without its pid, which a
// forked child differs in.
std::string HolderNotePrefix();

// A note's fields: "ipclock host=H pid=P", and " since=S" (Unix seconds)
// on the etcd store's lock keys, which say since when each is queued.
struct HolderNote {
  std::string host;
  int pid = 0;
  int64_t since = 0;
};
HolderNote ParseHolderNote(absl::string_view note);

// Adds the note's host to `lock` (text detail "host"), and, when that host
// is `this_host`, its pid and the process's command name.
void FillFromHolderNote(absl::string_view note, const std::string& this_host, HeldLock* lock);

// The waiter a lock key's note names: its pid and command where its host
// is `this_host`, and since when it waits.
LockWaiter WaiterFromNote(absl::string_view note, const std::string& this_host);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_HOLDER_NOTE_H_
