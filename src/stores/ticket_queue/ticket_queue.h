// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A queue of waiters kept in shared memory beside a lock that does not
// serve its waiters in order by itself (flock(2), a POSIX semaphore), so
// that a store can: a process that must wait takes a ticket, sleeps until
// it is first, then waits for the lock itself, and passes its turn on once
// it holds the lock (or gives up). Only the first waiter ever waits for the
// lock, so when the holder releases there is nobody for it to race but that
// waiter, and the holder, if it acquires again, finds the queue not empty
// and queues behind. A try never jumps the queue: it takes the lock only
// while nobody queues.
//
//   TicketQueue queue(&page->queue);
//   if (queue.Empty() && TryTheLock()) return true;       // no queue work
//   if (deadline.has_passed()) return false;
//   QueuePlace place(queue);                              // joins
//   if (!place.AwaitTurn(deadline)) return false;         // left the queue
//   return WaitForTheLock(deadline);                 // ~QueuePlace passes on
//
// The uncontended path reads two words and writes nothing.
//
// What a queue never does is decide who holds the lock: the lock itself
// still excludes. So every doubt is settled by passing a waiter over, which
// costs it its place in the order, never exclusion:
//   * A waiter killed while it waits keeps its ticket. When its turn comes
//     it is passed over at once if its process no longer exists; a zombie
//     not yet reaped, or a waiter killed while it was first already, is
//     found gone (pid and start time, /proc) by those behind once the first
//     place has not moved for a slice (100 ms), and passed over then.
//   * A waiter whose deadline passes marks its ticket left: it is passed
//     over at once when it comes first.
//   * A ticket whose waiter is not recorded (killed between taking it and
//     writing its entry, or its entry reused by a waiter 32 tickets later)
//     is passed over once it has been first for a slice.
//   * A waiter passed over, yet alive, goes to the lock at once: it then
//     races the new first waiter there, once.
//   * Words that make no sense (a queue rewritten or zeroed under us, a
//     ticket no longer between the first and the last) send the waiter to
//     the lock at once.
// A holder killed holding the lock is the lock's business (the kernel
// releases a flock; the registry reclaims a POSIX permit): the queue has
// moved on already, since the first waiter passes its turn on as soon as it
// holds the lock.
//
// Order. Tickets are served in the order they were taken, whatever the
// waiters' scheduling priorities (the shm store's priority-inheritance
// mutexes serve by priority first). Readers of a shared lock queue with
// writers, so a writer waits only for those who came before it, and readers
// who come after a waiting writer wait for it: no writer starves.
// Pass-overs and processes that do not use the queue (PHP, flock(1), a
// store without `fair`) take the lock out of turn.
//
// Every process that can write the memory can also break the queue; none of
// its values is trusted beyond one use, and no loop over them is unbounded.

#ifndef IPCLOCK_STORES_TICKET_QUEUE_H_
#define IPCLOCK_STORES_TICKET_QUEUE_H_

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "ipclock/spi/deadline.h"

namespace ipclock {

class Key;

inline constexpr uint32_t kTicketQueueEntries = 32;

// Who holds a ticket. Written by its waiter when it joins and when it
// leaves; read by the others when that ticket is first.
struct TicketQueueEntry {
  uint64_t tag;         // ticket << 32 | TicketState; 0 never written
  uint64_t start_time;  // of `pid`, in clock ticks since boot (/proc)
  int32_t pid;
  uint32_t mode;  // a QueuedFor; 0 from builds that did not write it
};

// The queue in shared memory. All zero is an empty queue. 8-byte aligned;
// every field is read and written with atomic operations only.
struct TicketQueueShared {
  uint32_t next;        // the ticket the next waiter takes
  uint32_t first;       // the ticket that goes to the lock next; the futex word
  int64_t first_since;  // CLOCK_MONOTONIC ns when `first` last moved
  TicketQueueEntry entries[kTicketQueueEntries];
};
// Shared with processes of other builds (in lock files and registries):
// change it only with the layouts that hold it.
static_assert(sizeof(TicketQueueEntry) == 24 && sizeof(TicketQueueShared) == 784,
              "the queue's layout is shared between processes");

// What a waiter queues for, as its entry says (for `ipclock list`).
enum class QueuedFor : uint32_t { kUnknown = 0, kExclusive = 1, kShared = 2 };

struct QueuedWaiter {
  pid_t pid = 0;
  QueuedFor mode = QueuedFor::kUnknown;
};

// Who queues, for `ipclock list`: from a copy of a TicketQueueShared
// (`bytes`, read in one call: nothing in it is trusted), the waiter of each
// ticket from the first to the last whose entry says it waits, in the
// order they will be served. A ticket whose entry is reused, marked left or
// not written yet is not named. Empty for bytes that are no queue.
std::vector<QueuedWaiter> QueuedWaiters(absl::string_view bytes);

class TicketQueue {
 public:
  explicit TicketQueue(TicketQueueShared* shared) : q_(shared) {}

  // True when nobody queues: the lock may be tried at once. A first waiter
  // that is dead, gone or long unrecorded is passed over on the way (see
  // above), so that a try is not refused for good by a ticket nobody
  // serves.
  bool Empty();

  // The slice after which a stalled queue is looked at.
  static constexpr int64_t kSliceNanos = 100 * 1000 * 1000;

 private:
  friend class QueuePlace;
  enum class Holder { kWaiting, kGone, kLeft, kUnknown };

  uint32_t Join(QueuedFor mode);
  // Marks `ticket` left, and passes it on if it is first already.
  void Leave(uint32_t ticket);
  // If `ticket` is still first, the next ticket becomes first (passing over
  // tickets marked left) and its waiter is woken.
  void PassOn(uint32_t ticket);
  // Who holds `ticket`, from its entry; whether its process is gone from
  // /proc (`exact`) or only from kill(2), which cannot see a zombie or a
  // reused pid as gone.
  Holder HolderOf(uint32_t ticket, bool exact) const;
  // If `first` is still first and its holder left, or is gone or unknown
  // after a slice, passes it over. True if it did.
  bool PassOverIfStalled(uint32_t first);

  TicketQueueShared* q_;
};

// A waiter's place in a TicketQueue: joins the queue when made; when
// destroyed, passes its turn on (or leaves the queue if its turn never
// came).
class QueuePlace {
 public:
  explicit QueuePlace(TicketQueue queue, QueuedFor mode = QueuedFor::kUnknown);
  ~QueuePlace();
  QueuePlace(const QueuePlace&) = delete;
  QueuePlace& operator=(const QueuePlace&) = delete;

  // Sleeps until this place is first (or was passed over, or the queue
  // makes no sense: go to the lock either way). False when `deadline`
  // passed first, or the wait of `key` (if given) was cancelled (seen at a
  // signal that interrupts the sleep, else within a slice): the place has
  // left the queue.
  bool AwaitTurn(Deadline deadline, const Key* key = nullptr);

 private:
  enum class State { kQueued, kTurn, kLeft };
  TicketQueue queue_;
  uint32_t ticket_;
  State state_ = State::kQueued;
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_TICKET_QUEUE_H_
