// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The record that torture's workers update under the lock, and the
// bookkeeping the supervisor reads to tell holders from waiters. It lives in
// one MAP_SHARED anonymous mapping made by the supervisor before it forks
// any worker, so that workers restarted after a kill see the same record.
//
// Every field is a lock-free atomic: when the lock fails, two workers touch
// the record at once, and that is exactly what must be observable rather
// than undefined. Atomics on a shared mapping work between processes as
// long as they are lock-free (static_asserts below).

#ifndef IPCLOCK_TOOLS_TORTURE_RECORD_H_
#define IPCLOCK_TOOLS_TORTURE_RECORD_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace ipclock_torture {

inline constexpr int kMaxWorkers = 64;
inline constexpr int kMaxMessages = 16;
inline constexpr int kMessageBytes = 240;

enum WorkerState : uint32_t {
  kIdle = 0,     // between iterations, or not started
  kWaiting = 1,  // inside Acquire()
  kHolding = 2,  // Acquire() returned OK and Release() has not started
};

// One worker process. A slot is reused by the worker started in its place.
struct WorkerSlot {
  std::atomic<pid_t> pid{0};
  std::atomic<uint32_t> state{kIdle};
  // Iterations this slot's workers completed, across restarts.
  std::atomic<uint64_t> iterations{0};
};

// The data the lock protects, and what the holders leave for the next one.
struct Protected {
  // Incarnation id of the holder (see WorkerMain), 0 when nobody holds.
  std::atomic<uint64_t> owner{0};
  // That holder's pid and /proc start time, to tell later whether it died.
  std::atomic<pid_t> owner_pid{0};
  std::atomic<uint64_t> owner_start{0};
  // In a CLI storm, the holder's parent: the `ipclock run` it runs under.
  std::atomic<pid_t> owner_parent{0};
  // 1 from just after acquisition to just before release.
  std::atomic<uint32_t> inside{0};
  // The counter every holder increments, and its value after the last step
  // that ran to its end.
  std::atomic<uint64_t> counter{0};
  std::atomic<uint64_t> committed{0};
  // counter+1 while a holder is between reading and committing: a holder
  // killed half-way leaves it set, which accounts for its half-step.
  std::atomic<uint64_t> intent{0};
};

struct Record {
  Protected data;
  WorkerSlot slots[kMaxWorkers];

  std::atomic<uint32_t> stop{0};
  std::atomic<uint64_t> next_incarnation{1};
  // The last process the supervisor killed and when (monotonic ns), set
  // just before the kill: the start of a handover after a death.
  std::atomic<pid_t> last_kill_pid{0};
  std::atomic<int64_t> last_kill_ns{0};

  // Results, summed by the workers.
  std::atomic<uint64_t> violations{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> takeovers{0};       // acquisitions after a dead holder
  // CLI storms (storm.cc): takeovers whose holder was told of the death, and
  // holders told of a death that happened before the dead one recorded
  // itself (an `ipclock` killed before its command started); completed
  // critical sections.
  std::atomic<uint64_t> deaths_told{0};
  std::atomic<uint64_t> deaths_told_unseen{0};
  std::atomic<uint64_t> sections{0};
  std::atomic<uint64_t> half_steps{0};      // of those, with a step half done
  std::atomic<int64_t> worst_wait_ns{0};    // longest Acquire() that succeeded
  // Longest time from a holder's kill to the next acquisition by a worker
  // that was already waiting: the bound the store promises after a death.
  std::atomic<int64_t> worst_handover_after_death_ns{0};
  // When a worker last got the lock (monotonic ns).
  std::atomic<int64_t> last_progress_ns{0};

  // The first messages about violations and errors, for the report.
  std::atomic<uint32_t> message_count{0};
  char messages[kMaxMessages][kMessageBytes];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<int64_t>::is_always_lock_free);
static_assert(std::atomic<pid_t>::is_always_lock_free);

// Maps a zeroed Record shared with every process forked afterwards. Aborts
// if the mapping fails: nothing could run without it.
Record* MapRecord();
void UnmapRecord(Record* record);
// The same in a file at `path`, for processes that are exec()ed rather than
// forked (a CLI storm's commands): `CreateRecordFile()` makes the file, a
// zeroed Record, and maps it; `MapRecordFile()` maps an existing one.
// Both print what failed and return nullptr. Unmap with UnmapRecordFile().
Record* CreateRecordFile(const char* path);
Record* MapRecordFile(const char* path);
void UnmapRecordFile(Record* record);

// Raises `*target` to `value` if it is larger.
void StoreMax(std::atomic<int64_t>* target, int64_t value);

// Counts a violation (or an error) and keeps its message if there is room.
// Safe from any worker; never blocks.
void ReportViolation(Record* record, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void ReportError(Record* record, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

}  // namespace ipclock_torture

#endif  // IPCLOCK_TOOLS_TORTURE_RECORD_H_
