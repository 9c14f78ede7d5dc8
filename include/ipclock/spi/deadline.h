// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: spi/deadline.h
// -----------------------------------------------------------------------------
//
// For store writers (the store SPI), and for programs that hand deadlines
// on (the CLI does); programs that only take locks pass durations.
//
// A `Deadline` is a point on the monotonic clock (CLOCK_MONOTONIC) by which a
// wait must end. Waits in ipclock take deadlines rather than durations so that
// a wait that is interrupted and resumed (EINTR, a re-opened lock file, a
// reconnect) never waits longer in total than the caller asked for, and so
// that a change of the wall clock (NTP, an RTC set at boot on a device without
// a battery) neither shortens nor stretches a wait.

#ifndef IPCLOCK_SPI_DEADLINE_H_
#define IPCLOCK_SPI_DEADLINE_H_

#include <time.h>

#include <cstdint>

#include "absl/time/time.h"

namespace ipclock {

class Deadline {
 public:
  // A deadline that has already passed: a wait with it tries exactly once.
  static Deadline Past() { return Deadline(0); }

  // A deadline that never passes: a wait with it waits for as long as it
  // takes.
  static Deadline Never() { return Deadline(kNeverNanos); }

  // The deadline `timeout` from now. A zero or negative timeout gives
  // `Past()`; `absl::InfiniteDuration()` gives `Never()`.
  static Deadline In(absl::Duration timeout);

  // Nanoseconds on CLOCK_MONOTONIC, now.
  static int64_t NowNanos();

  bool is_never() const { return nanos_ == kNeverNanos; }
  bool has_passed() const { return !is_never() && NowNanos() >= nanos_; }

  // Time left until the deadline: zero once it has passed, infinite for
  // `Never()`.
  absl::Duration Remaining() const;

  // The deadline as an absolute CLOCK_MONOTONIC time, for the kernel calls
  // that take one (futex, sem_clockwait, pthread_mutex_clocklock). Undefined
  // for `Never()`; check `is_never()` first.
  struct timespec ToMonotonicTimespec() const;

  int64_t monotonic_nanos() const { return nanos_; }

  friend bool operator<(Deadline a, Deadline b) { return a.nanos_ < b.nanos_; }
  friend bool operator==(Deadline a, Deadline b) {
    return a.nanos_ == b.nanos_;
  }

 private:
  static constexpr int64_t kNeverNanos = INT64_MAX;
  explicit Deadline(int64_t nanos) : nanos_(nanos) {}

  int64_t nanos_;
};

}  // namespace ipclock

#endif  // IPCLOCK_SPI_DEADLINE_H_
