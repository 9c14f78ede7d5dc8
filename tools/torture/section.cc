// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// torture-section: the command that a CLI storm (storm.cc) runs under
// `ipclock run`, i.e. the critical section whose deaths must be told.
//
//   torture-section RECORD HOLD_US
//
// On entry it reads who was inside before it from the record (a file that
// the storm maps too): a process that recorded itself there and never
// cleared its entry, and that is gone now, died inside the lock, and this
// run must have been told so (IPCLOCK_PREVIOUS_OWNER_DIED=1); one that is
// still alive is a second holder. Then it records its own pid and start
// time, sleeps up to HOLD_US, and clears the entry on its way out.
//
// It is a program of its own, linked with the platform layer's /proc reader
// only, because the storm starts one per acquisition: a process that loads
// the whole library and its dozens of shared objects takes ten times as
// long to start, and the storm would kill far fewer holders per second.

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>

#include "platform/proc_pid.h"
#include "torture/record.h"

namespace {

using ipclock_torture::Record;

void SleepMicros(long us) {
  if (us <= 0) return;
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: torture-section RECORD HOLD_US\n");
    return 2;
  }
  Record* r = ipclock_torture::MapRecordFile(argv[1]);
  if (r == nullptr) return 2;
  const long hold_us = strtol(argv[2], nullptr, 10);
  const char* told_env = getenv("IPCLOCK_PREVIOUS_OWNER_DIED");
  const bool told = told_env != nullptr && strcmp(told_env, "1") == 0;
  const pid_t self = getpid();
  const uint64_t start = ipclock::ProcessStartTime(self);

  ipclock_torture::Protected& data = r->data;
  const pid_t previous = data.owner_pid.load();
  const uint64_t previous_start = data.owner_start.load();
  if (previous != 0) {
    // The storm kills a command and waits until it is gone before it kills
    // the `ipclock` above it, which is what frees the lock: a previous
    // occupant that is still there was never out of the lock.
    if (!ipclock::ProcessIsGone(previous, previous_start)) {
      ipclock_torture::ReportViolation(
          r, "two holders: pid %d entered while pid %d, which never left, is alive", self,
          previous);
    } else {
      r->takeovers.fetch_add(1);
      if (told) {
        r->deaths_told.fetch_add(1);
      } else {
        ipclock_torture::ReportViolation(
            r, "pid %d took over from pid %d, which died inside the lock, and was not told "
               "(IPCLOCK_PREVIOUS_OWNER_DIED unset)",
            self, previous);
      }
    }
  } else if (told) {
    // Told of a death the record does not show: an `ipclock` killed holding
    // the lock before its command recorded itself. Not a violation.
    r->deaths_told_unseen.fetch_add(1);
  }
  data.owner_start.store(start);
  data.owner_parent.store(getppid());
  data.owner_pid.store(self);
  unsigned seed = static_cast<unsigned>(self) ^ static_cast<unsigned>(start);
  SleepMicros(hold_us > 0 ? static_cast<long>(rand_r(&seed) % (hold_us + 1)) : 0);
  data.owner_pid.store(0);
  data.owner_start.store(0);
  r->sections.fetch_add(1);
  return 0;
}
