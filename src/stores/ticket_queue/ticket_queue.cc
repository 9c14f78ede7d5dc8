// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/ticket_queue/ticket_queue.h"

#include <errno.h>
#include <string.h>

#include <climits>

#include "absl/time/time.h"
#include "core/platform_deadline.h"
#include "ipclock/spi/key.h"
#include "platform/futex.h"
#include "platform/proc_pid.h"
#include "platform/process_id.h"
#include "platform/shared_word.h"

namespace ipclock {

namespace {

enum TicketState : uint32_t {
  kTicketWaiting = 1,
  kTicketLeft = 2,
};

// More tickets than this between the first and the last is a queue written
// by someone else: the waiter goes to the lock.
constexpr uint32_t kMaxQueued = 1u << 20;

// Sequentially consistent throughout: a waiter that marks its ticket left
// and then reads `first`, and a passer that moves `first` and then reads
// the entry, must not both miss the other (see Leave and PassOn).
template <typename T>
T Load(const T* p) { return SharedLoad<__ATOMIC_SEQ_CST>(p); }
template <typename T>
void Put(T* p, T v) { SharedStore<__ATOMIC_SEQ_CST>(p, v); }
template <typename T>
bool CompareExchange(T* p, T expected, T desired) {
  return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST);
}

uint64_t Tag(uint32_t ticket, TicketState state) {
  return (static_cast<uint64_t>(ticket) << 32) | state;
}

// Each ticket sleeps on its own bit of the `first` word, so a pass wakes the
// new first waiter alone (and whoever holds a ticket 32 apart from it).
uint32_t BitOf(uint32_t ticket) { return 1u << (ticket % 32); }

}  // namespace

std::vector<QueuedWaiter> QueuedWaiters(absl::string_view bytes) {
  std::vector<QueuedWaiter> out;
  TicketQueueShared q;
  if (bytes.size() < sizeof(q)) return out;
  memcpy(&q, bytes.data(), sizeof(q));
  if (q.next - q.first > kMaxQueued) return out;
  for (uint32_t t = q.first, n = 0; t != q.next && n < kTicketQueueEntries; ++t, ++n) {
    const TicketQueueEntry& e = q.entries[t % kTicketQueueEntries];
    if (e.tag != Tag(t, kTicketWaiting) || e.pid <= 0) continue;
    QueuedWaiter w;
    w.pid = e.pid;
    if (e.mode == static_cast<uint32_t>(QueuedFor::kExclusive) ||
        e.mode == static_cast<uint32_t>(QueuedFor::kShared)) {
      w.mode = static_cast<QueuedFor>(e.mode);
    }
    out.push_back(w);
  }
  return out;
}

uint32_t TicketQueue::Join(QueuedFor mode) {
  const uint32_t ticket = __atomic_fetch_add(&q_->next, 1u, __ATOMIC_SEQ_CST);
  // First of an empty queue: its wait starts now, not when the last
  // waiter before it passed on.
  if (Load(&q_->first) == ticket) Put(&q_->first_since, Deadline::NowNanos());
  TicketQueueEntry& e = q_->entries[ticket % kTicketQueueEntries];
  Put(&e.pid, static_cast<int32_t>(CurrentPid()));
  Put(&e.start_time, CurrentProcessStartTime());
  Put(&e.mode, static_cast<uint32_t>(mode));
  Put(&e.tag, Tag(ticket, kTicketWaiting));
  return ticket;
}

void TicketQueue::Leave(uint32_t ticket) {
  // Only our own entry: one reused by a later ticket is left alone, and this
  // ticket is then passed over as unknown.
  TicketQueueEntry& e = q_->entries[ticket % kTicketQueueEntries];
  CompareExchange(&e.tag, Tag(ticket, kTicketWaiting), Tag(ticket, kTicketLeft));
  // Made first meanwhile? Then nobody else will pass it on soon: we do.
  // Otherwise whoever makes it first sees the mark (PassOn).
  if (Load(&q_->first) == ticket) PassOn(ticket);
}

void TicketQueue::PassOn(uint32_t ticket) {
  for (uint32_t i = 0; i < kTicketQueueEntries; ++i) {
    if (!CompareExchange(&q_->first, ticket, ticket + 1)) return;  // moved by another
    Put(&q_->first_since, Deadline::NowNanos());
    ++ticket;
    if (Load(&q_->next) == ticket) return;  // nobody queues
    // A waiter that left, or whose process is certainly gone (one kill(2),
    // no /proc: this runs at every handover), is passed over now rather
    // than after a slice.
    const Holder holder = HolderOf(ticket, /*exact=*/false);
    if (holder != Holder::kLeft && holder != Holder::kGone) {
      (void)FutexWakeBits(&q_->first, INT_MAX, BitOf(ticket), /*shared=*/true);
      return;
    }
  }
  // A long run of tickets passed over: let every waiter look for itself.
  (void)FutexWake(&q_->first, INT_MAX, /*shared=*/true);
}

TicketQueue::Holder TicketQueue::HolderOf(uint32_t ticket, bool exact) const {
  const TicketQueueEntry& e = q_->entries[ticket % kTicketQueueEntries];
  const uint64_t tag = Load(&e.tag);
  if (tag == Tag(ticket, kTicketLeft)) return Holder::kLeft;
  if (tag != Tag(ticket, kTicketWaiting)) return Holder::kUnknown;
  const pid_t pid = Load(&e.pid);
  const uint64_t start_time = Load(&e.start_time);
  // Rewritten while we read: by a later ticket, so this one is unknown now.
  if (Load(&e.tag) != tag) return Holder::kUnknown;
  if (pid <= 0) return Holder::kGone;
  const bool gone = exact ? ProcessIsGone(pid, start_time) : NoSuchProcess(pid);
  return gone ? Holder::kGone : Holder::kWaiting;
}

bool TicketQueue::PassOverIfStalled(uint32_t first) {
  Holder holder = HolderOf(first, /*exact=*/false);
  if (holder == Holder::kWaiting || holder == Holder::kUnknown) {
    // /proc is read, and an unrecorded ticket passed over, only once the
    // first waiter has been first for a slice. A time from the future is
    // someone else's word: stalled.
    const int64_t now = Deadline::NowNanos();
    const int64_t since = Load(&q_->first_since);
    if (since <= now && now - since < kSliceNanos) return false;
    if (holder == Holder::kWaiting) holder = HolderOf(first, /*exact=*/true);
    if (holder == Holder::kWaiting) return false;
  }
  PassOn(first);
  return true;
}

bool TicketQueue::Empty() {
  // Bounded: each round passes one ticket over or ends.
  for (uint32_t round = 0; round <= kTicketQueueEntries; ++round) {
    const uint32_t next = Load(&q_->next);
    const uint32_t first = Load(&q_->first);
    const uint32_t queued = next - first;
    if (queued == 0 || queued > kMaxQueued) return true;
    if (!PassOverIfStalled(first)) return false;
  }
  return false;
}

QueuePlace::QueuePlace(TicketQueue queue, QueuedFor mode)
    : queue_(queue), ticket_(queue_.Join(mode)) {}

QueuePlace::~QueuePlace() {
  if (state_ == State::kQueued) {
    queue_.Leave(ticket_);
  } else if (state_ == State::kTurn && Load(&queue_.q_->first) == ticket_) {
    queue_.PassOn(ticket_);
  }
}

bool QueuePlace::AwaitTurn(Deadline deadline, const Key* key) {
  for (;;) {
    const uint32_t first = Load(&queue_.q_->first);
    const uint32_t next = Load(&queue_.q_->next);
    const uint32_t ahead = ticket_ - first;
    // First; or not between the first and the last any more (passed over,
    // or the queue was rewritten): go to the lock.
    if (ahead == 0 || ahead >= next - first) break;
    if (deadline.has_passed() || (key != nullptr && key->cancelled())) {
      state_ = State::kLeft;
      queue_.Leave(ticket_);
      return false;
    }
    if (queue_.PassOverIfStalled(first)) continue;
    Deadline wake = Deadline::In(absl::Nanoseconds(TicketQueue::kSliceNanos));
    if (deadline < wake) wake = deadline;
    const int err = FutexWaitBitsUntil(&queue_.q_->first, first, BitOf(ticket_),
                                       /*shared=*/true, ForPlatform(wake));
    // Any other error: this queue cannot be slept on; the lock still excludes.
    if (err != 0 && err != EAGAIN && err != EINTR && err != ETIMEDOUT) break;
  }
  state_ = State::kTurn;
  return true;
}

}  // namespace ipclock
