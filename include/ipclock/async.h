// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: async.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (include it beside ipclock/ipclock.h).
//
// `ipclock::AsyncWaiter` waits for locks on behalf of an event loop (epoll,
// sd-event, libuv, ...): the loop polls one file descriptor, and the waiter
// runs a callback on the loop's thread when an acquisition ends.
//
// Example:
//
//   // The loop polls waiter->fd() for EPOLLIN and then calls
//   // waiter->ProcessReady(), which runs the callbacks.
//   absl::StatusOr<std::unique_ptr<ipclock::AsyncWaiter>> AddWaiter(int ep) {
//     absl::StatusOr<std::unique_ptr<ipclock::AsyncWaiter>> waiter =
//         ipclock::AsyncWaiter::Create();
//     if (!waiter.ok()) return waiter.status();
//     struct epoll_event ev = {};
//     ev.events = EPOLLIN;
//     epoll_ctl(ep, EPOLL_CTL_ADD, (*waiter)->fd(), &ev);
//     return waiter;
//   }
//
//   absl::Status StartWaiting(ipclock::AsyncWaiter& waiter, ipclock::Lock& lock) {
//     return waiter
//         .Start(lock, ipclock::LockMode::kExclusive, absl::Seconds(5),
//                [](const ipclock::AsyncResult& r) {
//                  if (r.status.ok()) UseResource(*r.lock);
//                })
//         .status();
//   }
//
// Each `Start()` ends exactly once, with an `AsyncResult` whose status is
//   OK                 the lock is held (`r.lock->is_acquired()`);
//   DeadlineExceeded   another holder kept it until the deadline;
//   Cancelled          `Cancel()` or the waiter's destruction ended it;
//                      the lock is not held;
//   another error      the store failed; the lock is not held.
// Deadlines are on the monotonic clock, as everywhere in ipclock.
//
// THREADS. An AsyncWaiter is not thread-safe: create it, and call every
// method, on the loop's thread. Callbacks run only inside `ProcessReady()`,
// on that thread, and may call `Start()` and `Cancel()`. Locks of the shm
// store belong to the thread that acquires them, and the waiter acquires
// them on the loop's thread, so the loop's thread must release them too.
// (ThreadSanitizer does not treat an io_uring completion as synchronization;
// none is needed, since no data passes between threads through the ring.
// Helper threads hand results over under a mutex, which it does see.)
//
// LIFETIME. A Lock passed to `Start()` must stay alive, and must not be used,
// until its callback has run. Destroying the waiter cancels what is pending
// without running callbacks and returns once nothing refers to those Locks
// any more (which may take up to a slice, below, on stores without a futex
// word).
//
// HOW IT WAITS. No thread and no timer polls for a release; a release wakes
// the waiter as it would wake a blocking `Lock::Acquire()`.
//   * The shm store (shm://NAME, not pi=true or fair=true) gives a futex
//     word: the glibc robust mutex's own (see src/platform/mutex_futex.h for the glibc
//     layout this relies on, checked at compile time and by a self-test at
//     run time). With io_uring futex waits (Linux 6.7+) the waiter queues one
//     IORING_OP_FUTEX_WAIT per acquisition, with an IORING_OP_LINK_TIMEOUT at
//     the deadline and IORING_OP_ASYNC_CANCEL for `Cancel()`: any number of
//     waits, no thread. Each wake tries the lock once on the loop's thread.
//   * Without io_uring, or on stores without a futex word (flock, semaphore,
//     posix-semaphore, in-memory), a pool of helper threads does the
//     sleeping: one thread per pending acquisition, reused afterwards, with
//     small stacks. For the shm store a helper sleeps on the futex word
//     (futex_waitv with a private cancel word, Linux 5.16+) and the try still
//     runs on the loop's thread; for the other stores a helper runs the
//     store's own blocking wait, in slices of at most 200 ms so that a
//     `Cancel()` is seen within a slice (the release still wakes the helper
//     at once: the slices bound cancellation, not hand-over latency).
//   So 1000 pending waits cost 1000 SQEs on the io_uring path, and 1000
//   mostly idle threads otherwise: a thread costs little where the kernel
//   does the waking, and a bounded pool that rotated among waits would have
//   to poll.
// Why io_uring is not used (disabled by kernel.io_uring_disabled, refused by
// a seccomp filter as in many containers, a kernel before 6.7, a build
// without liburing) is written to stderr once per process.
//
// Set IPCLOCK_ASYNC_FORCE_FALLBACK=1 in the environment (or
// `AsyncWaiterOptions::backend`) to use helper threads even where io_uring
// works, e.g. to test that path.

#ifndef IPCLOCK_ASYNC_H_
#define IPCLOCK_ASYNC_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"

namespace ipclock {

// Identifies one `Start()`; never reused by a waiter.
using AsyncId = uint64_t;

struct AsyncResult {
  AsyncId id = 0;
  // See the table at the top of this file.
  absl::Status status;
  // The Lock given to Start().
  Lock* lock = nullptr;
};

using AsyncCallback = std::function<void(const AsyncResult&)>;

struct AsyncWaiterOptions {
  enum class Backend : uint8_t {
    kAuto,     // io_uring where it works, helper threads otherwise
    kIoUring,  // io_uring or a failure to create the waiter
    kThreads,  // helper threads only
  };
  // kAuto becomes kThreads when IPCLOCK_ASYNC_FORCE_FALLBACK=1 is set.
  Backend backend = Backend::kAuto;
  // Submission queue entries of the ring; more waits than this are fine.
  uint32_t ring_entries = 256;
};

class AsyncWaiter {
 public:
  // Unavailable for kIoUring where io_uring futex waits do not work; an OS
  // error if no eventfd could be made.
  static absl::StatusOr<std::unique_ptr<AsyncWaiter>> Create(
      const AsyncWaiterOptions& options = AsyncWaiterOptions());

  AsyncWaiter(const AsyncWaiter&) = delete;
  AsyncWaiter& operator=(const AsyncWaiter&) = delete;
  virtual ~AsyncWaiter();

  // A descriptor to poll for readability (an eventfd). When it is readable,
  // call ProcessReady(). It stays the same for the waiter's life.
  virtual int fd() const = 0;

  // Starts acquiring `lock` in `mode` for up to `timeout` (InfiniteDuration
  // waits as long as it takes; zero tries once). `done` runs once, from a
  // later ProcessReady(), even if the lock was free at once. Errors here
  // (FailedPrecondition for a Lock that already has a pending Start(), a
  // mode the store lacks, or a pi=true or fair=true shm store) mean nothing
  // started and `done` will not run.
  virtual absl::StatusOr<AsyncId> Start(Lock& lock, LockMode mode,
                                        absl::Duration timeout, AsyncCallback done) = 0;

  // Handles whatever is ready without blocking and runs the callbacks of the
  // acquisitions that ended. Returns how many callbacks ran.
  virtual size_t ProcessReady() = 0;

  // Ends a pending acquisition: its callback runs later, from
  // ProcessReady(), with Cancelled, and the lock is then not held, even if
  // it was acquired just before the cancellation (it is released again).
  // NotFound if `id` is unknown or its callback has already run (or is
  // running).
  virtual absl::Status Cancel(AsyncId id) = 0;

  // Acquisitions started whose callbacks have not run yet.
  virtual size_t pending() const = 0;

  // True if shm waits go through io_uring; false for helper threads only.
  virtual bool uses_io_uring() const = 0;

 protected:
  AsyncWaiter() = default;
};

}  // namespace ipclock

#endif  // IPCLOCK_ASYNC_H_
