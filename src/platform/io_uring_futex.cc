// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/io_uring_futex.h"

#include <errno.h>
#include <string.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ipclock_config.h"

#if IPCLOCK_HAVE_IO_URING
#include <liburing.h>

#include <cstdio>
#include <cstdlib>
#endif

namespace ipclock {

#if IPCLOCK_HAVE_IO_URING

namespace {

// uapi facts (include/uapi/linux/io_uring.h, futex.h) newer than liburing 2.3.
constexpr uint8_t kOpFutexWait = 51;
constexpr uint32_t kFutex2SizeU32 = 0x02;
constexpr uint32_t kFutex2Private = 128;
constexpr uint64_t kFutexMatchAny = 0xffffffffu;
// Completion queue size: every outstanding wait may have two completions
// (the wait and its timeout) posted before the loop drains them. Beyond it
// the kernel keeps overflowing completions (IORING_FEAT_NODROP, 5.5+).
constexpr unsigned kCqEntries = 4096;

// kernel.io_uring_disabled (6.6+): 0 allowed, 1 only for CAP_SYS_ADMIN or
// the kernel.io_uring_group, 2 refused for everyone. -1 if absent.
int IoUringDisabledSysctl() {
  FILE* f = fopen("/proc/sys/kernel/io_uring_disabled", "re");
  if (f == nullptr) return -1;
  int v = -1;
  if (fscanf(f, "%d", &v) != 1) v = -1;
  fclose(f);
  return v;
}

void PrepFutexWait(io_uring_sqe* sqe, uint32_t* word, uint32_t expected, bool shared) {
  // io_uring_prep_rw zeroes what must be zero (the op-flags word, called
  // `futex_flags` in newer headers; buf_index; file_index; len) and puts
  // `fd` and the offset (`addr2`) where the futex opcodes read them.
  io_uring_prep_rw(kOpFutexWait, sqe,
                   static_cast<int>(kFutex2SizeU32 | (shared ? 0 : kFutex2Private)),
                   word, 0, expected);
  sqe->addr3 = kFutexMatchAny;
}

}  // namespace

struct FutexRing::Impl {
  io_uring ring;
  bool set_up = false;
  __kernel_timespec scratch_ts;  // read by the kernel during submit only

  ~Impl() {
    if (set_up) io_uring_queue_exit(&ring);
  }

  // An SQE, submitting what is queued first if the SQ is full.
  io_uring_sqe* Sqe(unsigned needed) {
    if (io_uring_sq_space_left(&ring) < needed) io_uring_submit(&ring);
    return io_uring_get_sqe(&ring);
  }

  absl::Status Submit(absl::string_view what) {
    for (;;) {
      int rc = io_uring_submit(&ring);
      if (rc >= 0) return absl::OkStatus();
      if (rc == -EINTR) continue;
      return absl::UnavailableError(absl::StrCat("ipclock: io_uring submit (", what,
                                                 "): ", strerror(-rc)));
    }
  }
};

absl::StatusOr<std::unique_ptr<FutexRing>> FutexRing::Create(int eventfd,
                                                             unsigned entries) {
  const int disabled = IoUringDisabledSysctl();
  if (disabled == 2) {
    return absl::UnavailableError(
        "io_uring is disabled on this host (kernel.io_uring_disabled=2)");
  }
  auto impl = std::make_unique<Impl>();
  io_uring_params params = {};
  params.flags = IORING_SETUP_CQSIZE;
  params.cq_entries = kCqEntries;
  int rc = io_uring_queue_init_params(entries, &impl->ring, &params);
  if (rc < 0) {
    std::string why = strerror(-rc);
    if (rc == -EPERM && disabled == 1) {
      why += " (kernel.io_uring_disabled=1 and this process is not allowed)";
    } else if (rc == -EPERM || rc == -ENOSYS) {
      why += " (a seccomp filter, as in many containers, or a kernel without io_uring)";
    }
    return absl::UnavailableError(absl::StrCat("io_uring_setup failed: ", why));
  }
  impl->set_up = true;
  io_uring_probe* probe = io_uring_get_probe_ring(&impl->ring);
  const bool has_futex =
      probe != nullptr && io_uring_opcode_supported(probe, kOpFutexWait) != 0;
  if (probe != nullptr) io_uring_free_probe(probe);
  if (!has_futex) {
    return absl::UnavailableError(
        "this kernel's io_uring has no IORING_OP_FUTEX_WAIT (Linux 6.7+)");
  }

  // Self-test: a wait whose expected value differs must fail with EAGAIN.
  uint32_t word = 1;
  io_uring_sqe* sqe = io_uring_get_sqe(&impl->ring);
  if (sqe == nullptr) return absl::UnavailableError("io_uring: no submission entry");
  PrepFutexWait(sqe, &word, 0, /*shared=*/false);
  sqe->user_data = 1;
  io_uring_cqe* cqe = nullptr;
  rc = io_uring_submit_and_wait(&impl->ring, 1);
  if (rc >= 0) rc = io_uring_wait_cqe(&impl->ring, &cqe);
  const int res = (rc == 0 && cqe != nullptr) ? cqe->res : rc;
  if (cqe != nullptr) io_uring_cqe_seen(&impl->ring, cqe);
  if (res != -EAGAIN) {
    return absl::UnavailableError(absl::StrCat(
        "the io_uring futex wait self-test returned ", res, " instead of -EAGAIN"));
  }

  rc = io_uring_register_eventfd(&impl->ring, eventfd);
  if (rc < 0) {
    return absl::UnavailableError(
        absl::StrCat("io_uring_register_eventfd failed: ", strerror(-rc)));
  }
  return std::unique_ptr<FutexRing>(new FutexRing(std::move(impl)));
}

absl::Status FutexRing::Wait(uint32_t* word, uint32_t expected, bool shared,
                             MonotonicDeadline deadline, uint64_t wait_data,
                             uint64_t timeout_data) {
  const bool timed = !deadline.is_never();
  io_uring_sqe* sqe = impl_->Sqe(timed ? 2 : 1);
  if (sqe == nullptr) return absl::ResourceExhaustedError("ipclock: io_uring queue full");
  PrepFutexWait(sqe, word, expected, shared);
  sqe->user_data = wait_data;
  if (timed) {
    sqe->flags |= IOSQE_IO_LINK;
    const struct timespec ts = deadline.ToTimespec();
    impl_->scratch_ts.tv_sec = ts.tv_sec;
    impl_->scratch_ts.tv_nsec = ts.tv_nsec;
    io_uring_sqe* t = io_uring_get_sqe(&impl_->ring);
    io_uring_prep_link_timeout(t, &impl_->scratch_ts, IORING_TIMEOUT_ABS);
    t->user_data = timeout_data;
  }
  // Submitted now: the timespec is copied during submission, and a wait
  // must be armed before the caller returns to its loop.
  return impl_->Submit("futex wait");
}

absl::Status FutexRing::Cancel(uint64_t target_data, uint64_t cancel_data) {
  io_uring_sqe* sqe = impl_->Sqe(1);
  if (sqe == nullptr) return absl::ResourceExhaustedError("ipclock: io_uring queue full");
  io_uring_prep_cancel64(sqe, target_data, 0);
  sqe->user_data = cancel_data;
  return impl_->Submit("cancel");
}

size_t FutexRing::Drain(absl::FunctionRef<void(uint64_t, int)> fn) {
  size_t n = 0;
  io_uring_cqe* cqe = nullptr;
  while (io_uring_peek_cqe(&impl_->ring, &cqe) == 0 && cqe != nullptr) {
    const uint64_t data = cqe->user_data;
    const int res = cqe->res;
    io_uring_cqe_seen(&impl_->ring, cqe);
    fn(data, res);
    ++n;
  }
  return n;
}

size_t FutexRing::WaitAndDrain(absl::FunctionRef<void(uint64_t, int)> fn) {
  io_uring_cqe* cqe = nullptr;
  while (io_uring_wait_cqe(&impl_->ring, &cqe) == -EINTR) {
  }
  return Drain(fn);
}

#else  // !IPCLOCK_HAVE_IO_URING

struct FutexRing::Impl {};

absl::StatusOr<std::unique_ptr<FutexRing>> FutexRing::Create(int, unsigned) {
  return absl::UnavailableError("ipclock was built without liburing (-Dio_uring)");
}

absl::Status FutexRing::Wait(uint32_t*, uint32_t, bool, MonotonicDeadline, uint64_t, uint64_t) {
  return absl::UnimplementedError("io_uring");
}

absl::Status FutexRing::Cancel(uint64_t, uint64_t) {
  return absl::UnimplementedError("io_uring");
}

size_t FutexRing::Drain(absl::FunctionRef<void(uint64_t, int)>) { return 0; }
size_t FutexRing::WaitAndDrain(absl::FunctionRef<void(uint64_t, int)>) { return 0; }

#endif  // IPCLOCK_HAVE_IO_URING

FutexRing::FutexRing(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FutexRing::~FutexRing() = default;

}  // namespace ipclock
