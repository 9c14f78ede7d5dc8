// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the C API's handles hold. Handles own C++ objects; nothing C++
// crosses the boundary but pointers to these structs and C strings they
// own. The library is built without exceptions,
// and handles are allocated with nothrow new so that an allocation failure
// is -ENOMEM, not an abort.

#ifndef IPCLOCK_CAPI_HANDLES_H_
#define IPCLOCK_CAPI_HANDLES_H_

#include <sys/types.h>

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ipclock/c.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store.h"
#include "platform/event_signal.h"

// Immutable once opened, so that threads may share it without a mutex (its
// diagnostic sink lives in the Store, which guards it).
struct ipclock_store {
  std::shared_ptr<ipclock::Store> store;
  std::string name;
  std::string description;
};

// A lock is in one of two states: its own (`watch` null), or on a watch
// (`watch` set), where `watched` has taken `lock` over and left it
// moved-from. The fields the watch's thread reads (`resource`, `store`)
// are set at creation and never change.
struct ipclock_lock {
  explicit ipclock_lock(ipclock::Lock l) : lock(std::move(l)) {}

  std::shared_ptr<ipclock::Store> store;
  std::string resource;
  ipclock::LockOptions options;

  ipclock::Lock lock;
  ipclock::WatchedLock watched;
  ipclock_watch* watch = nullptr;
  // previous_owner_died() of the acquisition the watch took over, which a
  // WatchedLock does not say.
  bool previous_owner_died_when_watched = false;
  // Likewise its slots (Lock::slots()).
  std::vector<uint32_t> slots_when_watched;
  // What the watch found, once it found the lock lost: told to the handle
  // by the watch's sink, which sees every loss. Guarded by watch->mu.
  absl::Status lost_on_watch;

  std::string error;
};

struct ipclock_watch {
  ipclock_watch(ipclock::EventSignal s, absl::Duration interval, ipclock_lost_fn fn, void* arg);

  ipclock::LockWatch watch;
  // Readable while `lost` is not empty, in the process that made the watch.
  const ipclock::EventSignal signal;
  const absl::Duration check_interval;
  const ipclock_lost_fn on_lost;
  void* const on_lost_arg;
  // The process the watch belongs to: a fork()ed child's copy neither reads
  // nor writes the descriptor it shares with the parent.
  const pid_t owner;

  // Taken around fork() (watch_handle.cc), so that a child finds it free.
  std::mutex mu;
  std::vector<ipclock_lock*> locks;  // guarded by mu: every lock on the watch
  std::deque<ipclock_lock*> lost;    // guarded by mu: found lost, not acknowledged
};

#endif  // IPCLOCK_CAPI_HANDLES_H_
