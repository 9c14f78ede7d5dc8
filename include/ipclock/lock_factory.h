// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: lock_factory.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// `LockFactory` makes `Lock`s on one store with shared defaults;
// `AcquireLock()` makes one and acquires it in one call; `RunLocked()` runs a
// callable while holding a lock.
//
// Example:
//
//   absl::StatusOr<int> ExportRows() {
//     absl::StatusOr<std::shared_ptr<ipclock::Store>> store =
//         ipclock::StoreFromDsn("flock");
//     if (!store.ok()) return store.status();
//     ipclock::LockFactory factory(*store);
//     // DeadlineExceeded if the lock stayed busy for 10 s, another error if
//     // the store failed, else CountRows()'s result.
//     return ipclock::RunLocked(factory, "nightly-export", absl::Seconds(10),
//                               [] { return CountRows(); });
//   }
//
//   absl::Status Rotate(const std::shared_ptr<ipclock::Store>& store) {
//     absl::StatusOr<ipclock::Lock> lock =
//         ipclock::AcquireLock(store, "log-rotate", absl::Seconds(1));
//     if (!lock.ok()) return lock.status();
//     // ... held until `lock` goes out of scope ...
//     return lock->Release();
//   }

#ifndef IPCLOCK_LOCK_FACTORY_H_
#define IPCLOCK_LOCK_FACTORY_H_

#include <memory>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"

namespace ipclock {

class LockFactory {
 public:
  explicit LockFactory(std::shared_ptr<Store> store,
                       LockOptions defaults = LockOptions())
      : store_(std::move(store)), defaults_(std::move(defaults)) {}

  absl::StatusOr<Lock> CreateLock(absl::string_view resource) const {
    return Lock::Create(store_, resource, defaults_);
  }
  absl::StatusOr<Lock> CreateLock(absl::string_view resource,
                                  const LockOptions& options) const {
    return Lock::Create(store_, resource, options);
  }

  const std::shared_ptr<Store>& store() const { return store_; }
  const LockOptions& defaults() const { return defaults_; }

 private:
  std::shared_ptr<Store> store_;
  LockOptions defaults_;
};

// Makes a Lock on `resource` and acquires it, waiting up to `timeout` (zero
// tries once). The codes are those of `Lock::Create()` and
// `Lock::Acquire()`: DeadlineExceeded when the lock stayed busy.
absl::StatusOr<Lock> AcquireLock(std::shared_ptr<Store> store,
                                 absl::string_view resource,
                                 absl::Duration timeout = absl::InfiniteDuration(),
                                 LockMode mode = LockMode::kExclusive,
                                 const LockOptions& options = LockOptions());

// Acquires `resource` (waiting up to `timeout`, in `mode`), runs `fn()`, and
// releases. Returns `fn()`'s result, or the status that kept `fn` from
// running (DeadlineExceeded when the lock stayed busy, the store's error
// otherwise). For a `fn` returning void the result is `absl::Status`; for
// one returning `absl::Status` or `absl::StatusOr<T>` it is that type. A
// failed release after `fn` ran is reported only when `fn` succeeded.
template <typename Fn>
auto RunLocked(const LockFactory& factory, absl::string_view resource,
               absl::Duration timeout, Fn&& fn,
               LockMode mode = LockMode::kExclusive);

// --- Implementation details follow --------------------------------------------

namespace internal {

template <typename T>
struct RunLockedResult {
  using type = absl::StatusOr<T>;
};
template <>
struct RunLockedResult<void> {
  using type = absl::Status;
};
template <>
struct RunLockedResult<absl::Status> {
  using type = absl::Status;
};
template <typename T>
struct RunLockedResult<absl::StatusOr<T>> {
  using type = absl::StatusOr<T>;
};

inline bool ResultOk(const absl::Status& s) { return s.ok(); }
template <typename T>
bool ResultOk(const absl::StatusOr<T>& s) {
  return s.ok();
}
template <typename T>
bool ResultOk(const T&) {
  return true;
}

}  // namespace internal

template <typename Fn>
auto RunLocked(const LockFactory& factory, absl::string_view resource,
               absl::Duration timeout, Fn&& fn, LockMode mode) {
  using Raw = std::decay_t<std::invoke_result_t<Fn>>;
  using Result = typename internal::RunLockedResult<Raw>::type;
  absl::StatusOr<Lock> lock = factory.CreateLock(resource);
  if (!lock.ok()) return Result(lock.status());
  if (absl::Status s = lock->Acquire(timeout, mode); !s.ok()) return Result(s);
  if constexpr (std::is_void_v<Raw>) {
    std::forward<Fn>(fn)();
    return Result(lock->Release());
  } else {
    Result result(std::forward<Fn>(fn)());
    absl::Status released = lock->Release();
    if (internal::ResultOk(result) && !released.ok()) return Result(released);
    return result;
  }
}

}  // namespace ipclock

#endif  // IPCLOCK_LOCK_FACTORY_H_
