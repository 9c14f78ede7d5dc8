// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/timed_flock.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "platform/files.h"

namespace ipclock {

namespace {

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

void IgnoreSignal(int) {}

int ClaimSignal() {
  for (int sig = SIGRTMAX; sig >= SIGRTMIN; --sig) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa = {};
    sa.sa_handler = IgnoreSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the point is to interrupt flock
    if (sigaction(sig, &sa, nullptr) == 0) return sig;
  }
  return 0;
}

int PollUntil(int fd, int operation, MonotonicDeadline deadline) {
  int64_t step_ns = 1000000;
  for (;;) {
    int err = FlockFdRestarting(fd, operation | LOCK_NB);
    if (err != EWOULDBLOCK) return err;
    if (deadline.has_passed()) return EWOULDBLOCK;
    int64_t left = deadline.nanos() - MonotonicNowNanos();
    int64_t nap = std::min(step_ns, std::max<int64_t>(left, 0));
    struct timespec ts = {static_cast<time_t>(nap / 1000000000),
                          static_cast<long>(nap % 1000000000)};
    // An early return (EINTR) only makes the next try sooner.
    (void)nanosleep(&ts, nullptr);
    step_ns = std::min<int64_t>(step_ns * 2, 20000000);
  }
}

}  // namespace

int TimedWaitSignal() {
  static const int sig = ClaimSignal();
  return sig;
}

int FlockUntil(int fd, int operation, MonotonicDeadline deadline, bool* waited) {
  if (waited != nullptr) *waited = false;
  const int err = FlockFdRestarting(fd, operation | LOCK_NB);
  if (err != EWOULDBLOCK || deadline.has_passed()) return err;
  if (waited != nullptr) *waited = true;
  return FlockWaitUntil(fd, operation, deadline);
}

int FlockWaitUntil(int fd, int operation, MonotonicDeadline deadline) {
  if (deadline.has_passed()) return FlockFdRestarting(fd, operation | LOCK_NB);
  if (deadline.is_never()) return FlockFdRestarting(fd, operation);

  const int sig = TimedWaitSignal();
  if (sig == 0) return PollUntil(fd, operation, deadline);

  struct sigevent sev = {};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = sig;
  sev.sigev_notify_thread_id = static_cast<pid_t>(syscall(SYS_gettid));
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
    return PollUntil(fd, operation, deadline);
  }
  struct itimerspec its = {};
  its.it_value = deadline.ToTimespec();
  its.it_interval.tv_nsec = 1000000;
  sigset_t just_sig, old_mask;
  sigemptyset(&just_sig);
  sigaddset(&just_sig, sig);
  // pthread_sigmask and timer_delete fail only for arguments that are wrong
  // by construction here (EINVAL); a failure is still not ignored: the wait
  // falls back to polling, which needs neither.
  if (pthread_sigmask(SIG_UNBLOCK, &just_sig, &old_mask) != 0) {
    (void)timer_delete(timer);
    return PollUntil(fd, operation, deadline);
  }
  if (timer_settime(timer, TIMER_ABSTIME, &its, nullptr) != 0) {
    const int err = errno;
    (void)pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    (void)timer_delete(timer);
    return err;
  }

  int err;
  for (;;) {
    err = FlockFd(fd, operation);
    if (err != EINTR) break;
    if (deadline.has_passed()) {
      // One last try: the holder may have released as the timer fired.
      err = FlockFdRestarting(fd, operation | LOCK_NB);
      break;
    }
  }

  // Block the signal, delete the timer, then consume a delivery that may
  // still be pending, so none reaches the program after we return. The
  // results are not needed: these calls cannot fail with the arguments made
  // above, and the lock's outcome is already decided.
  (void)pthread_sigmask(SIG_BLOCK, &just_sig, nullptr);
  (void)timer_delete(timer);
  struct timespec zero = {0, 0};
  while (sigtimedwait(&just_sig, nullptr, &zero) == sig) {
  }
  (void)pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return err;
}

}  // namespace ipclock

