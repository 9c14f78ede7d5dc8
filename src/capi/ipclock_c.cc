// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The C API over the C++ core. Handles own C++ objects; nothing C++ crosses
// the boundary but pointers to these structs and C strings they own. The
// library is built without exceptions, and handles are allocated with
// nothrow new so that an allocation failure is -ENOMEM, not an abort.

#include "ipclock/c.h"

#include <errno.h>

#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"

struct ipclock_store {
  std::shared_ptr<ipclock::Store> store;
  // The last failure of a call on the store, from whichever thread made it:
  // threads may share a store handle (c.h), so the text is written under
  // `mu` and read out as a copy (ipclock_store_error).
  mutable std::mutex mu;
  std::string error;  // guarded by mu
};

struct ipclock_lock {
  explicit ipclock_lock(ipclock::Lock l) : lock(std::move(l)) {}
  ipclock::Lock lock;
  std::string error;
};

namespace {

thread_local std::string t_last_error;
// What ipclock_store_error() last returned on this thread.
thread_local std::string t_store_error;

// The one mapping from canonical codes to the C API's errno values.
int CodeFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 0;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return -EINVAL;
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return -EACCES;
    case absl::StatusCode::kUnavailable:
      return -EAGAIN;
    case absl::StatusCode::kNotFound:
      return -ENOENT;
    case absl::StatusCode::kAlreadyExists:
      return -EEXIST;
    case absl::StatusCode::kResourceExhausted:
      return -ENOSPC;
    case absl::StatusCode::kUnimplemented:
      return -ENOSYS;
    case absl::StatusCode::kFailedPrecondition:
      return -EPERM;
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kCancelled:
      return -ECANCELED;
    case absl::StatusCode::kDeadlineExceeded:
      return -ETIMEDOUT;
    default:
      return -EIO;
  }
}

// Records `message` where the caller can find it: on the handle, if any,
// and for the thread.
int Fail(std::string* handle_error, int code, std::string message) {
  if (handle_error != nullptr) *handle_error = message;
  t_last_error = std::move(message);
  return code;
}

int Fail(std::string* handle_error, const absl::Status& status) {
  return Fail(handle_error, CodeFor(status.code()), std::string(status.message()));
}

// Fail() for a store handle, which threads may share.
int FailOnStore(ipclock_store* store, int code, std::string message) {
  {
    std::lock_guard<std::mutex> guard(store->mu);
    store->error = message;
  }
  return Fail(nullptr, code, std::move(message));
}

int FailOnStore(ipclock_store* store, const absl::Status& status) {
  return FailOnStore(store, CodeFor(status.code()), std::string(status.message()));
}

int NullArgument(const char* function) {
  return Fail(nullptr, -EINVAL,
              std::string("ipclock: ") + function + ": NULL argument");
}

absl::Duration TtlFromMs(int64_t ttl_ms) {
  if (ttl_ms == 0) return ipclock::LockOptions().ttl;
  if (ttl_ms < 0) return absl::InfiniteDuration();
  return absl::Milliseconds(ttl_ms);
}

}  // namespace

extern "C" {

int ipclock_store_open(const char* dsn, ipclock_store** out) {
  if (out != nullptr) *out = nullptr;
  if (dsn == nullptr || out == nullptr) return NullArgument("ipclock_store_open");
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) return Fail(nullptr, store.status());
  ipclock_store* handle = new (std::nothrow) ipclock_store;
  if (handle == nullptr) {
    return Fail(nullptr, -ENOMEM, "ipclock: out of memory for a store handle");
  }
  handle->store = *std::move(store);
  *out = handle;
  return 0;
}

void ipclock_store_close(ipclock_store* store) { delete store; }

const char* ipclock_store_error(const ipclock_store* store) {
  if (store == nullptr) return "ipclock: NULL store";
  {
    std::lock_guard<std::mutex> guard(store->mu);
    t_store_error = store->error;
  }
  return t_store_error.c_str();
}

int ipclock_lock_create(ipclock_store* store, const char* resource,
                        size_t resource_len,
                        const struct ipclock_lock_options* opts,
                        ipclock_lock** out) {
  if (out != nullptr) *out = nullptr;
  if (store == nullptr || resource == nullptr || out == nullptr) {
    return NullArgument("ipclock_lock_create");
  }
  ipclock::LockOptions options;
  if (opts != nullptr) {
    options.ttl = TtlFromMs(opts->ttl_ms);
    options.permits = opts->permits == 0 ? 1 : opts->permits;
    options.auto_release = opts->keep_on_destroy == 0;
  }
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(
      store->store, absl::string_view(resource, resource_len), options);
  if (!lock.ok()) return FailOnStore(store, lock.status());
  ipclock_lock* handle = new (std::nothrow) ipclock_lock(*std::move(lock));
  if (handle == nullptr) {
    return FailOnStore(store, -ENOMEM, "ipclock: out of memory for a lock handle");
  }
  *out = handle;
  return 0;
}

int ipclock_lock_acquire(ipclock_lock* lock, unsigned flags, int64_t wait_ms) {
  if (lock == nullptr) return NullArgument("ipclock_lock_acquire");
  if ((flags & ~(IPCLOCK_SHARED | IPCLOCK_NONBLOCK)) != 0) {
    return Fail(&lock->error, -EINVAL,
                "ipclock: ipclock_lock_acquire: unknown flags " +
                    std::to_string(flags));
  }
  const ipclock::LockMode mode = (flags & IPCLOCK_SHARED) != 0
                                     ? ipclock::LockMode::kShared
                                     : ipclock::LockMode::kExclusive;
  if ((flags & IPCLOCK_NONBLOCK) != 0 || wait_ms == 0) {
    absl::StatusOr<bool> got = lock->lock.TryAcquire(mode);
    if (!got.ok()) return Fail(&lock->error, got.status());
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
  if (!s.ok()) return Fail(&lock->error, s);
  return 0;
}

int ipclock_lock_refresh(ipclock_lock* lock, int64_t ttl_ms) {
  if (lock == nullptr) return NullArgument("ipclock_lock_refresh");
  if (ttl_ms < 0) {
    return Fail(&lock->error, -EINVAL,
                "ipclock: ipclock_lock_refresh: negative ttl_ms");
  }
  std::optional<absl::Duration> ttl;
  if (ttl_ms > 0) ttl = absl::Milliseconds(ttl_ms);
  absl::Status s = lock->lock.Refresh(ttl);
  return s.ok() ? 0 : Fail(&lock->error, s);
}

int ipclock_lock_release(ipclock_lock* lock) {
  if (lock == nullptr) return NullArgument("ipclock_lock_release");
  absl::Status s = lock->lock.Release();
  return s.ok() ? 0 : Fail(&lock->error, s);
}

void ipclock_lock_destroy(ipclock_lock* lock) { delete lock; }

int ipclock_lock_is_acquired(const ipclock_lock* lock) {
  if (lock == nullptr) return NullArgument("ipclock_lock_is_acquired");
  return lock->lock.is_acquired() ? 1 : 0;
}

int ipclock_lock_is_expired(const ipclock_lock* lock) {
  if (lock == nullptr) return NullArgument("ipclock_lock_is_expired");
  return lock->lock.IsExpired() ? 1 : 0;
}

int64_t ipclock_lock_remaining_ms(const ipclock_lock* lock) {
  if (lock == nullptr) return NullArgument("ipclock_lock_remaining_ms");
  absl::Duration left = lock->lock.RemainingLifetime();
  if (left == absl::InfiniteDuration()) return -1;
  return absl::ToInt64Milliseconds(left);
}

int ipclock_lock_fence(const ipclock_lock* lock, uint64_t* out) {
  if (lock == nullptr || out == nullptr) return NullArgument("ipclock_lock_fence");
  // A token left from an earlier acquisition fences nothing now.
  std::optional<uint64_t> fence = lock->lock.fence();
  if (!lock->lock.is_acquired() || !fence) return -ENODATA;
  *out = *fence;
  return 0;
}

int ipclock_lock_previous_owner_died(const ipclock_lock* lock) {
  if (lock == nullptr) return NullArgument("ipclock_lock_previous_owner_died");
  return lock->lock.previous_owner_died() ? 1 : 0;
}

const char* ipclock_lock_error(const ipclock_lock* lock) {
  if (lock == nullptr) return "ipclock: NULL lock";
  return lock->error.c_str();
}

const char* ipclock_strerror(int code) {
  switch (code) {
    case 0:
      return "success";
    case IPCLOCK_BUSY:
      return "the lock is held by another owner";
    case -EINVAL:
      return "invalid argument";
    case -EACCES:
      return "permission denied";
    case -EAGAIN:
      return "store unavailable for now";
    case -ENOENT:
      return "not found";
    case -EEXIST:
      return "already exists";
    case -ENOSPC:
      return "resource exhausted";
    case -ENOSYS:
      return "store not in this build";
    case -EPERM:
      return "operation not permitted";
    case -ECANCELED:
      return "the lock was lost";
    case -ETIMEDOUT:
      return "store operation timed out";
    case -ENOMEM:
      return "out of memory";
    case -ENODATA:
      return "no fencing token";
    case -EIO:
      return "store error";
    default:
      return "unknown ipclock error code";
  }
}

const char* ipclock_last_error(void) { return t_last_error.c_str(); }

}  // extern "C"
