// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Lock handles of the C API (c.h, "Locks"). A handle holds its Lock, or,
// while on a watch, the WatchedLock that took the Lock over (handles.h):
// each call goes to whichever it holds.

#include <errno.h>

#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "capi/errors.h"
#include "capi/handles.h"
#include "capi/watch_handle.h"
#include "ipclock/c.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "platform/errors.h"

namespace {

using ipclock::capi::Fail;
using ipclock::capi::FailMaking;

ipclock::LockOptions OptionsFrom(const ipclock_lock_options* opts) {
  ipclock::LockOptions options;
  if (opts == nullptr) return options;
  if (opts->ttl_ms < 0) {
    options.ttl = absl::InfiniteDuration();
  } else if (opts->ttl_ms > 0) {
    options.ttl = absl::Milliseconds(opts->ttl_ms);
  }
  options.permits = opts->permits == 0 ? 1 : opts->permits;
  options.weight = opts->weight == 0 ? 1 : opts->weight;
  options.auto_release = opts->keep_on_destroy == 0;
  if (opts->max_resource_bytes != 0) {
    options.key_options.max_resource_bytes = opts->max_resource_bytes;
  }
  return options;
}

// Makes a Lock with `make(options)` and wraps it in a handle: `*out`, or
// the error that kept it from being made. `args_ok`: the call's own
// pointers besides `store` are there.
template <typename MakeLock>
int MakeHandle(const char* function, ipclock_store* store, bool args_ok,
               const struct ipclock_lock_options* opts, ipclock_lock** out, char** error,
               MakeLock make) {
  if (int rc = ipclock::capi::StartMaking(out, error, store != nullptr && args_ok, function);
      rc != 0) {
    return rc;
  }
  const ipclock::LockOptions options = OptionsFrom(opts);
  absl::StatusOr<ipclock::Lock> lock = make(options);
  if (!lock.ok()) return FailMaking(error, lock.status());
  std::string resource = lock->resource();
  ipclock_lock* handle = new (std::nothrow) ipclock_lock(*std::move(lock));
  if (handle == nullptr) {
    return FailMaking(error, -ENOMEM, "ipclock: out of memory for a lock handle");
  }
  handle->store = store->store;
  handle->resource = std::move(resource);
  handle->options = options;
  *out = handle;
  return 0;
}

// The refusal of a call that a lock on a watch cannot take.
int OnWatch(ipclock_lock* lock, absl::string_view function, absl::string_view instead) {
  return Fail(lock, ipclock::StoreError(
                        absl::StatusCode::kFailedPrecondition, lock->store->Describe(),
                        lock->resource,
                        absl::StrCat(function, ": the lock is on a watch; ", instead)));
}

}  // namespace

extern "C" {

int ipclock_lock_create(ipclock_store* store, const char* resource,
                        size_t resource_len,
                        const struct ipclock_lock_options* opts,
                        ipclock_lock** out, char** error) {
  return MakeHandle("ipclock_lock_create", store, resource != nullptr, opts, out, error,
                    [&](const ipclock::LockOptions& options) {
                      return ipclock::Lock::Create(
                          store->store, absl::string_view(resource, resource_len), options);
                    });
}

int ipclock_lock_from_serialized(ipclock_store* store, const char* text,
                                 const struct ipclock_lock_options* opts,
                                 ipclock_lock** out, char** error) {
  return MakeHandle("ipclock_lock_from_serialized", store, text != nullptr, opts, out, error,
                    [&](const ipclock::LockOptions& options) {
                      return ipclock::Lock::FromSerialized(store->store, text, options);
                    });
}

int ipclock_lock_acquire(ipclock_lock* lock, unsigned flags, int64_t wait_ms) {
  if (lock == nullptr) return -EINVAL;
  if ((flags & ~(IPCLOCK_SHARED | IPCLOCK_NONBLOCK)) != 0) {
    return Fail(lock, -EINVAL,
                "ipclock: ipclock_lock_acquire: unknown flags " + std::to_string(flags));
  }
  if (lock->watch != nullptr) {
    return OnWatch(lock, "ipclock_lock_acquire",
                   "release it or take it off the watch first");
  }
  const ipclock::LockMode mode = (flags & IPCLOCK_SHARED) != 0
                                     ? ipclock::LockMode::kShared
                                     : ipclock::LockMode::kExclusive;
  if ((flags & IPCLOCK_NONBLOCK) != 0 || wait_ms == 0) {
    absl::StatusOr<bool> got = lock->lock.TryAcquire(mode);
    if (!got.ok()) return Fail(lock, got.status());
    return *got ? 0 : IPCLOCK_BUSY;
  }
  absl::Duration timeout =
      wait_ms < 0 ? absl::InfiniteDuration() : absl::Milliseconds(wait_ms);
  absl::Status s = lock->lock.Acquire(timeout, mode);
  // Lock::Acquire reports a wait that ran out as DeadlineExceeded, and only
  // that (a store whose own call timed out says Unavailable); here
  // contention is a value, as it is for a single try.
  if (s.code() == absl::StatusCode::kDeadlineExceeded) {
    lock->error = std::string(s.message());
    return IPCLOCK_BUSY;
  }
  return s.ok() ? 0 : Fail(lock, s);
}

int ipclock_lock_refresh(ipclock_lock* lock, int64_t ttl_ms) {
  if (lock == nullptr) return -EINVAL;
  if (ttl_ms < 0) {
    return Fail(lock, -EINVAL, "ipclock: ipclock_lock_refresh: negative ttl_ms");
  }
  if (lock->watch != nullptr) {
    return OnWatch(lock, "ipclock_lock_refresh",
                   "the watch renews its lease (take it off the watch to renew it by hand)");
  }
  std::optional<absl::Duration> ttl;
  if (ttl_ms > 0) ttl = absl::Milliseconds(ttl_ms);
  absl::Status s = lock->lock.Refresh(ttl);
  return s.ok() ? 0 : Fail(lock, s);
}

int ipclock_lock_check(ipclock_lock* lock) {
  if (lock == nullptr) return -EINVAL;
  absl::Status s =
      lock->watch != nullptr ? lock->watched.CheckNow() : lock->lock.CheckAcquired();
  return s.ok() ? 0 : Fail(lock, s);
}

int ipclock_lock_release(ipclock_lock* lock) {
  if (lock == nullptr) return -EINVAL;
  absl::Status found;
  if (lock->watch != nullptr) found = ipclock::capi::TakeBack(lock);
  absl::Status s = lock->lock.Release();
  // The store may no longer see the loss the watch found (a lock dir made
  // again since, a check skipped as too recent): the watch's word stands.
  if (s.ok() && !found.ok()) s = found;
  return s.ok() ? 0 : Fail(lock, s);
}

void ipclock_lock_destroy(ipclock_lock* lock) {
  if (lock == nullptr) return;
  if (lock->watch != nullptr) {
    // Finished first (which waits for a report of this lock under way), so
    // that no report can queue the handle after it left the watch.
    { ipclock::WatchedLock finished = std::move(lock->watched); }
    ipclock::capi::LeaveWatch(lock).IgnoreError();
  }
  delete lock;
}

int ipclock_lock_abandon(ipclock_lock* lock) {
  if (lock == nullptr) return -EINVAL;
  if (lock->watch != nullptr) ipclock::capi::TakeBack(lock).IgnoreError();
  lock->lock.Abandon();
  return 0;
}

int ipclock_lock_serialize(ipclock_lock* lock, char** text) {
  if (text != nullptr) *text = nullptr;
  if (lock == nullptr || text == nullptr) return -EINVAL;
  if (lock->watch != nullptr) {
    return OnWatch(lock, "ipclock_lock_serialize", "take it off the watch first");
  }
  absl::StatusOr<std::string> serialized = lock->lock.Serialize();
  if (!serialized.ok()) return Fail(lock, serialized.status());
  *text = ipclock::capi::MallocCopy(*serialized);
  if (*text == nullptr) return Fail(lock, -ENOMEM, "ipclock: out of memory for a serialized lock");
  return 0;
}

const char* ipclock_lock_resource(const ipclock_lock* lock, size_t* len) {
  if (lock == nullptr) {
    if (len != nullptr) *len = 0;
    return nullptr;
  }
  if (len != nullptr) *len = lock->resource.size();
  return lock->resource.c_str();
}

int ipclock_lock_is_acquired(const ipclock_lock* lock) {
  if (lock == nullptr) return -EINVAL;
  if (lock->watch != nullptr) return lock->watched.lost() ? 0 : 1;
  return lock->lock.is_acquired() ? 1 : 0;
}

int ipclock_lock_is_expired(const ipclock_lock* lock) {
  if (lock == nullptr) return -EINVAL;
  if (lock->watch != nullptr) {
    return lock->watched.RemainingLifetime() <= absl::ZeroDuration() ? 1 : 0;
  }
  return lock->lock.IsExpired() ? 1 : 0;
}

int64_t ipclock_lock_remaining_ms(const ipclock_lock* lock) {
  if (lock == nullptr) return -EINVAL;
  absl::Duration left = lock->watch != nullptr ? lock->watched.RemainingLifetime()
                                               : lock->lock.RemainingLifetime();
  if (left == absl::InfiniteDuration()) return -1;
  return absl::ToInt64Milliseconds(left);
}

int ipclock_lock_fence(const ipclock_lock* lock, uint64_t* out) {
  if (lock == nullptr || out == nullptr) return -EINVAL;
  // A token left from an earlier acquisition, or of a lock found lost,
  // fences nothing now.
  std::optional<uint64_t> fence;
  if (lock->watch != nullptr) {
    if (!lock->watched.lost()) fence = lock->watched.fence();
  } else if (lock->lock.is_acquired()) {
    fence = lock->lock.fence();
  }
  if (!fence) return -ENODATA;
  *out = *fence;
  return 0;
}

int ipclock_lock_previous_owner_died(const ipclock_lock* lock) {
  if (lock == nullptr) return -EINVAL;
  if (lock->watch != nullptr) return lock->previous_owner_died_when_watched ? 1 : 0;
  return lock->lock.previous_owner_died() ? 1 : 0;
}

int ipclock_lock_slots(const ipclock_lock* lock, uint32_t* slots, size_t cap) {
  if (lock == nullptr || (slots == nullptr && cap > 0)) return -EINVAL;
  const std::vector<uint32_t> held =
      lock->watch != nullptr ? lock->slots_when_watched : lock->lock.slots();
  for (size_t i = 0; i < held.size() && i < cap; ++i) slots[i] = held[i];
  return static_cast<int>(held.size());
}

const char* ipclock_lock_error(const ipclock_lock* lock) {
  if (lock == nullptr) return "ipclock: NULL lock";
  return lock->error.c_str();
}

}  // extern "C"
