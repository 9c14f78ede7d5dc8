// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// An io_uring used for one thing: futex waits (IORING_OP_FUTEX_WAIT, Linux
// 6.7) with deadlines and cancellation, whose completions signal an eventfd
// that an event loop polls.
//
// Debian 12's liburing (2.3) predates the futex opcodes, so the SQE is filled
// by hand from the kernel's uapi: opcode 51; `addr` the futex word, `addr2`
// the expected value, `addr3` the wake mask; `fd` the futex2 flags
// (FUTEX2_SIZE_U32, plus FUTEX2_PRIVATE for a word that is not in shared
// memory); `len`, the op-flags word, `buf_index` and `file_index` zero. A
// wrong field is EINVAL, so Create() runs one wait on a private word whose
// value differs from the expected one and requires EAGAIN back: that proves
// the layout and the opcode on this kernel before any lock relies on them.
//
// Caveats, handled by the caller:
//   * A completion is posted by task work on the thread that submitted. If
//     that thread sleeps in epoll_wait, the kernel interrupts and restarts
//     the sleep to run it, so the eventfd becomes readable as it should; but
//     the ring must be submitted to and drained from one thread.
//   * Deadlines are IORING_OP_LINK_TIMEOUT with IORING_TIMEOUT_ABS on
//     CLOCK_MONOTONIC (the default clock of io_uring timeouts). When it fires
//     the wait completes with ECANCELED and the timeout with ETIME; when the
//     wait completes first the timeout completes with ECANCELED.
//   * ThreadSanitizer does not see a completion as synchronization: nothing
//     here hands data between threads through the ring.

#ifndef IPCLOCK_PLATFORM_IO_URING_FUTEX_H_
#define IPCLOCK_PLATFORM_IO_URING_FUTEX_H_

#include <cstdint>
#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/monotonic_deadline.h"

namespace ipclock {

class FutexRing {
 public:
  // Sets up a ring with room for `entries` submissions at a time (more are
  // queued by submitting early) and registers `eventfd` for its completions.
  // Unavailable, saying why, where io_uring cannot do futex waits: built
  // without liburing, kernel.io_uring_disabled set, io_uring_setup refused
  // (EPERM/ENOSYS: seccomp in many containers), a kernel before 6.7, or a
  // failed self-test.
  static absl::StatusOr<std::unique_ptr<FutexRing>> Create(int eventfd,
                                                           unsigned entries = 256);

  FutexRing(const FutexRing&) = delete;
  FutexRing& operator=(const FutexRing&) = delete;
  ~FutexRing();

  // Submits a wait on `word` while it equals `expected`, completing with
  // `wait_data`; with a finite `deadline` it is linked to a timeout that
  // completes with `timeout_data`. `shared` for words in shared memory.
  absl::Status Wait(uint32_t* word, uint32_t expected, bool shared, MonotonicDeadline deadline,
                    uint64_t wait_data, uint64_t timeout_data);

  // Submits a cancellation of the request with `target_data`, completing
  // with `cancel_data` (0 or ENOENT/EALREADY if it had finished).
  absl::Status Cancel(uint64_t target_data, uint64_t cancel_data);

  // Calls `fn(user_data, res)` for each completion ready now, without
  // waiting. Returns how many there were.
  size_t Drain(absl::FunctionRef<void(uint64_t user_data, int res)> fn);

  // Like Drain(), but first waits for at least one completion.
  size_t WaitAndDrain(absl::FunctionRef<void(uint64_t user_data, int res)> fn);

 private:
  struct Impl;
  explicit FutexRing(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_IO_URING_FUTEX_H_
