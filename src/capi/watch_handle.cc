// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Watch handles of the C API (c.h, "Watching held locks"), over the public
// LockWatch: each C watch owns one (and so one thread), and gives each lock
// it watches a sink of its own, through which every loss the LockWatch
// finds of that lock arrives. The sink queues the lock for
// ipclock_watch_next_lost() and makes the eventfd readable, then runs the
// program's callback (or, without one, hands the loss on as any diagnostic).
//
// The eventfd is level-triggered by construction: it is written when the
// queue of unacknowledged losses goes from empty to one, and read empty when
// the queue goes back to empty, both under the watch's mutex, so its counter
// is 1 exactly while the queue has a lock.
//
// fork(): the child shares the parent's eventfd (the descriptor is copied,
// not the object), so nothing in a child reads or writes it: a watch knows
// the process that made it, and its calls in any other fail with -EPERM.
// The child has no LockWatch thread (LockWatch itself starts afresh in a
// child), and the watch mutexes are taken around fork() so that the
// child's copies are free.

#include <errno.h>

#include <algorithm>
#include <memory>
#include <vector>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "capi/diagnostic_handlers.h"
#include "capi/errors.h"
#include "capi/handles.h"
#include "capi/watch_handle.h"
#include "core/diagnostics.h"
#include "ipclock/c.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "platform/errors.h"
#include "platform/event_signal.h"
#include "platform/process_id.h"
#include "platform/thread.h"

ipclock_watch::ipclock_watch(ipclock::EventSignal s, absl::Duration interval,
                             ipclock_lost_fn fn, void* arg)
    : signal(std::move(s)),
      check_interval(interval),
      on_lost(fn),
      on_lost_arg(arg),
      owner(ipclock::CurrentPid()) {}

namespace ipclock {
namespace capi {
namespace {

// The watches' mutexes, held across fork().
struct WatchMutexes;

absl::Status RegisterWatch(ipclock_watch* watch) {
  return ForkHeldMutexes<WatchMutexes>::Add(&watch->mu);
}

void UnregisterWatch(ipclock_watch* watch) { ForkHeldMutexes<WatchMutexes>::Remove(&watch->mu); }

bool InOwner(const ipclock_watch* watch) { return watch->owner == CurrentPid(); }

// -EPERM, told to `lock`, for a watch used in a process other than its own.
int NotOurs(const ipclock_watch* watch, ipclock_lock* lock, absl::string_view function) {
  return Fail(lock, -EPERM,
              absl::StrCat("ipclock: ", function, ": the watch belongs to process ",
                           watch->owner, "; a fork()ed child makes a watch of its own"));
}

// The sink of one lock on a watch: the LockWatch calls it once, when it
// finds the lock lost, on its thread or on the thread of a check that found
// it, never after the lock's WatchedLock was finished. The callback runs
// before the descriptor turns readable, so that a loop woken by the
// descriptor finds whatever the callback noted. In a fork()ed child (a
// check of its copy) the loss goes to the store's sink only.
void OnLost(ipclock_watch* watch, ipclock_lock* lock, const std::shared_ptr<Store>& store,
            const Diagnostic& diagnostic) {
  {
    std::lock_guard<std::mutex> guard(watch->mu);
    lock->lost_on_watch = diagnostic.status;
  }
  const bool ours = InOwner(watch);
  if (ours && watch->on_lost != nullptr) {
    CallLostHandler(watch->on_lost, watch->on_lost_arg, lock, diagnostic);
  } else {
    EmitDiagnostic(store.get(), diagnostic);
  }
  if (!ours) return;
  std::lock_guard<std::mutex> guard(watch->mu);
  watch->lost.push_back(lock);
  if (watch->lost.size() == 1) watch->signal.Notify();
}

}  // namespace

absl::Status LeaveWatch(ipclock_lock* lock) {
  ipclock_watch* watch = std::exchange(lock->watch, nullptr);
  std::lock_guard<std::mutex> guard(watch->mu);
  watch->locks.erase(std::remove(watch->locks.begin(), watch->locks.end(), lock),
                     watch->locks.end());
  const bool was_waiting = !watch->lost.empty();
  watch->lost.erase(std::remove(watch->lost.begin(), watch->lost.end(), lock),
                    watch->lost.end());
  if (was_waiting && watch->lost.empty() && InOwner(watch)) watch->signal.Drain();
  return std::exchange(lock->lost_on_watch, absl::OkStatus());
}

absl::Status TakeBack(ipclock_lock* lock) {
  // Take() fails only for a WatchedLock already finished, and a handle on a
  // watch holds a live one.
  absl::StatusOr<Lock> taken = lock->watched.Take();
  if (taken.ok()) lock->lock = *std::move(taken);
  return LeaveWatch(lock);
}

}  // namespace capi
}  // namespace ipclock

namespace {

using ipclock::capi::Fail;
using ipclock::capi::FailMaking;
using ipclock::capi::InOwner;
using ipclock::capi::NotOurs;

// Takes `lock` off its watch; one the watch found lost is let go (as
// ipclock_lock_check() lets go of a loss it finds), and its loss returned.
absl::Status TakeOff(ipclock_lock* lock) {
  absl::Status found = ipclock::capi::TakeBack(lock);
  if (!found.ok()) lock->lock.Release().IgnoreError();
  return found;
}

}  // namespace

extern "C" {

int ipclock_watch_create(const struct ipclock_watch_options* opts, ipclock_watch** out,
                         char** error) {
  if (int rc = ipclock::capi::StartMaking(out, error, true, "ipclock_watch_create"); rc != 0) {
    return rc;
  }
  int64_t interval_ms = opts != nullptr ? opts->check_interval_ms : 0;
  if (interval_ms < 0) {
    return FailMaking(error, -EINVAL,
                      absl::StrCat("ipclock: ipclock_watch_create: check_interval_ms ",
                                   interval_ms, " is negative"));
  }
  if (interval_ms == 0) interval_ms = 1000;
  if (absl::Milliseconds(interval_ms) > ipclock::kMaxCheckInterval) {
    return FailMaking(error, -EINVAL,
                      absl::StrCat("ipclock: ipclock_watch_create: check_interval_ms ",
                                   interval_ms, " is above a year (",
                                   absl::ToInt64Milliseconds(ipclock::kMaxCheckInterval), ")"));
  }
  absl::StatusOr<ipclock::EventSignal> signal = ipclock::EventSignal::Create();
  if (!signal.ok()) return FailMaking(error, signal.status());
  ipclock_watch* watch = new (std::nothrow)
      ipclock_watch(*std::move(signal), absl::Milliseconds(interval_ms),
                    opts != nullptr ? opts->on_lost : nullptr,
                    opts != nullptr ? opts->on_lost_arg : nullptr);
  if (watch == nullptr) {
    return FailMaking(error, -ENOMEM, "ipclock: out of memory for a watch handle");
  }
  if (absl::Status s = ipclock::capi::RegisterWatch(watch); !s.ok()) {
    delete watch;
    return FailMaking(error, s);
  }
  *out = watch;
  return 0;
}

void ipclock_watch_destroy(ipclock_watch* watch) {
  if (watch == nullptr) return;
  std::vector<ipclock_lock*> locks;
  {
    std::lock_guard<std::mutex> guard(watch->mu);
    locks = watch->locks;
  }
  for (ipclock_lock* lock : locks) TakeOff(lock).IgnoreError();
  ipclock::capi::UnregisterWatch(watch);
  // Stops and joins the LockWatch's thread (in its own process only), and
  // closes this process's copy of the descriptor.
  delete watch;
}

int ipclock_watch_fd(const ipclock_watch* watch) {
  if (watch == nullptr) return -EINVAL;
  if (!InOwner(watch)) return -EPERM;
  return watch->signal.fd();
}

int ipclock_watch_add(ipclock_watch* watch, ipclock_lock* lock) {
  if (watch == nullptr || lock == nullptr) return -EINVAL;
  if (!InOwner(watch)) return NotOurs(watch, lock, "ipclock_watch_add");
  if (lock->watch != nullptr || !lock->lock.is_acquired()) {
    return Fail(lock, ipclock::StoreError(
                          absl::StatusCode::kFailedPrecondition, lock->store->Describe(),
                          lock->resource,
                          lock->watch != nullptr
                              ? "ipclock_watch_add: the lock is already on a watch"
                              : "ipclock_watch_add: the lock is not held"));
  }
  ipclock::WatchOptions options;
  options.check_interval = watch->check_interval;
  options.diagnostics = [watch, lock, store = lock->store](const ipclock::Diagnostic& d) {
    ipclock::capi::OnLost(watch, lock, store, d);
  };
  const bool previous_owner_died = lock->lock.previous_owner_died();
  std::vector<uint32_t> slots = lock->lock.slots();
  absl::StatusOr<ipclock::WatchedLock> watched =
      watch->watch.Watch(std::move(lock->lock), options);
  // A refusal (no thread or descriptor to be had) leaves the Lock held, here.
  if (!watched.ok()) return Fail(lock, watched.status());
  lock->watched = *std::move(watched);
  lock->previous_owner_died_when_watched = previous_owner_died;
  lock->slots_when_watched = std::move(slots);
  lock->watch = watch;
  std::lock_guard<std::mutex> guard(watch->mu);
  watch->locks.push_back(lock);
  return 0;
}

int ipclock_watch_remove(ipclock_watch* watch, ipclock_lock* lock) {
  if (watch == nullptr || lock == nullptr) return -EINVAL;
  if (!InOwner(watch)) return NotOurs(watch, lock, "ipclock_watch_remove");
  if (lock->watch != watch) {
    return Fail(lock, ipclock::StoreError(absl::StatusCode::kInvalidArgument,
                                          lock->store->Describe(), lock->resource,
                                          "ipclock_watch_remove: the lock is not on this watch"));
  }
  absl::Status found = TakeOff(lock);
  return found.ok() ? 0 : Fail(lock, found);
}

int ipclock_watch_next_lost(ipclock_watch* watch, ipclock_lock** lock) {
  if (lock != nullptr) *lock = nullptr;
  if (watch == nullptr || lock == nullptr) return -EINVAL;
  if (!InOwner(watch)) return -EPERM;
  std::lock_guard<std::mutex> guard(watch->mu);
  if (watch->lost.empty()) return 0;
  *lock = watch->lost.front();
  watch->lost.pop_front();
  if (watch->lost.empty()) watch->signal.Drain();
  return 1;
}

}  // extern "C"
