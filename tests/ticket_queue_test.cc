// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The queue that makes the flock and posix-semaphore stores fair
// (stores/ticket_queue/ticket_queue.h), between real processes on a shared page: turns
// come in the order tickets were taken; a waiter killed while it waits, one
// whose deadline passed, and a ticket taken by a process killed before it
// wrote its entry are passed over and never stop the queue; a try is
// refused while someone queues, and not for good by a dead first waiter;
// words written by someone else send waiters to the lock instead of
// stranding them.

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"
#include "stores/ticket_queue/ticket_queue.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Deadline;
using ipclock::QueuePlace;
using ipclock::TicketQueue;
using ipclock::TicketQueueShared;
using namespace ipclock_test;

struct Board {
  TicketQueueShared queue;
  std::atomic<int> order[16];
  std::atomic<int> turns{0};
  std::atomic<int64_t> turn_ns[16];
};

Board* NewBoard() { return SharedMemory<Board>(); }

// A child that joins (telling `joined`), waits for its turn for up to
// `wait_sec`, records when it came and in which place, holds it for
// `hold_ms`, and passes it on by leaving.
pid_t Waiter(Board* b, int id, Signal& joined, double wait_sec, int hold_ms = 0) {
  return ForkChild([=, &joined] {
    QueuePlace place{TicketQueue(&b->queue)};
    joined.Notify();
    if (!place.AwaitTurn(Deadline::In(absl::Seconds(wait_sec)))) return 3;
    b->turn_ns[id] = Deadline::NowNanos();
    b->order[b->turns.fetch_add(1)] = id;
    if (hold_ms > 0) usleep(hold_ms * 1000);
    return 0;
  });
}

// Turns come in ticket order, whoever sleeps how long.
void TurnsComeInOrder(void**) {
  Board* b = NewBoard();
  std::vector<pid_t> pids;
  std::vector<Signal> joined(4);
  {
    QueuePlace mine{TicketQueue(&b->queue)};
    assert_true(mine.AwaitTurn(Deadline::Past()));  // first of an empty queue
    for (int id = 0; id < 4; ++id) {
      pids.push_back(Waiter(b, id, joined[id], 30, 5));
      assert_int_equal(joined[id].Wait(), 'x');
    }
    assert_false(TicketQueue(&b->queue).Empty());
    usleep(50 * 1000);
    assert_int_equal(b->turns.load(), 0);
  }  // passes the turn on
  for (pid_t pid : pids) assert_int_equal(WaitChild(pid), 0);
  for (int i = 0; i < 4; ++i) assert_int_equal(b->order[i].load(), i);
  assert_true(TicketQueue(&b->queue).Empty());
}

// This process first in the queue, waiter 0 behind it (waiting up to
// `first_wait` s) and waiter 1 behind that, and `fate` done to waiter 0
// before this process passes its turn on. Returns the seconds waiter 1
// took to get its turn after the pass; `*first` is waiter 0.
double SecondWaitersTurn(Board* b, double first_wait, const std::function<void(pid_t)>& fate,
                         pid_t* first) {
  Signal j0, j1;
  pid_t after;
  int64_t passed_ns;
  {
    QueuePlace mine{TicketQueue(&b->queue)};
    assert_true(mine.AwaitTurn(Deadline::Past()));
    *first = Waiter(b, 0, j0, first_wait);
    assert_int_equal(j0.Wait(), 'x');
    after = Waiter(b, 1, j1, 30);
    assert_int_equal(j1.Wait(), 'x');
    fate(*first);
    passed_ns = Deadline::NowNanos();
  }
  assert_int_equal(WaitChild(after), 0);
  assert_int_equal(b->turns.load(), 1);
  return static_cast<double>(b->turn_ns[1] - passed_ns) / 1e9;
}

// A waiter killed in the queue is passed over when its turn comes: at once
// once it is reaped (no such process), after a slice of the first place
// not moving while it is a zombie (found gone in /proc). Either way the
// one behind it gets its turn.
void KilledWaiterIsPassedOver(bool reap_first) {
  pid_t doomed;
  const double took = SecondWaitersTurn(NewBoard(), 30, [&](pid_t first) {
    kill(first, SIGKILL);
    if (reap_first) assert_int_equal(WaitChild(first), 128 + SIGKILL);
  }, &doomed);
  if (!reap_first) assert_int_equal(WaitChild(doomed), 128 + SIGKILL);
  print_message("turn after a dead waiter (%s): %.3f s (slice %.1f s)\n",
                reap_first ? "reaped" : "a zombie", took, TicketQueue::kSliceNanos / 1e9);
  // A slice, then a look at /proc; anything near the 30 s wait is a wedge.
  if (took > 10) fail_msg("the waiter behind a dead one waited %.1f s", took);
}
void KilledWaiterIsPassedOver(void**) { KilledWaiterIsPassedOver(true); }
void ZombieWaiterIsPassedOver(void**) { KilledWaiterIsPassedOver(false); }

// A waiter whose deadline passed leaves: the one behind it is woken at
// once when the turn comes, with no slice to wait.
void TimedOutWaiterLeaves(void**) {
  pid_t quitter;
  const double took = SecondWaitersTurn(NewBoard(), 0.05, [](pid_t first) {
    assert_int_equal(WaitChild(first), 3);  // gave up
  }, &quitter);
  print_message("turn after a waiter that left: %.4f s\n", took);
  if (took > 10) fail_msg("the waiter behind one that left waited %.1f s", took);
}

// A try is refused while someone waits, and not for good when the first
// waiter died: once it has stalled for a slice it is passed over.
void EmptyPassesOverADeadFirstWaiter(void**) {
  Board* b = NewBoard();
  TicketQueue queue(&b->queue);
  assert_true(queue.Empty());
  Signal joined;
  pid_t doomed = ForkChild([&]() -> int {
    QueuePlace place{TicketQueue(&b->queue)};
    joined.Notify();
    for (;;) pause();
  });
  assert_int_equal(joined.Wait(), 'x');
  assert_false(queue.Empty());  // a live first waiter
  kill(doomed, SIGKILL);
  // Not reaped yet: a zombie, which only /proc tells from a live process.
  const double start = NowSeconds();
  while (!queue.Empty()) {
    if (NowSeconds() - start > 10) fail_msg("a dead first waiter blocks tries for good");
    usleep(10 * 1000);
  }
  print_message("tries refused for %.3f s after the death\n", NowSeconds() - start);
  assert_int_equal(WaitChild(doomed), 128 + SIGKILL);
}

// A ticket taken by a process killed before it wrote its entry: nobody can
// say whose it is, so it is passed over after a slice.
void UnrecordedTicketIsPassedOver(void**) {
  Board* b = NewBoard();
  __atomic_fetch_add(&b->queue.next, 1u, __ATOMIC_SEQ_CST);  // the dead joiner's ticket
  Signal joined;
  pid_t after = Waiter(b, 0, joined, 30);
  assert_int_equal(joined.Wait(), 'x');
  assert_int_equal(WaitChild(after), 0);
  assert_int_equal(b->turns.load(), 1);
}

// Words written by someone else (a zeroed page, a rewritten queue) send a
// waiter to the lock at once rather than leave it waiting for tickets that
// nobody holds.
void NonsenseSendsWaitersToTheLock(void**) {
  Board* b = NewBoard();
  Signal joined;
  pid_t first_holder = ForkChild([&]() -> int {
    QueuePlace place{TicketQueue(&b->queue)};
    if (!place.AwaitTurn(Deadline::Past())) return 3;
    joined.Notify();
    for (;;) pause();
  });
  assert_int_equal(joined.Wait(), 'x');
  Signal waiting;
  pid_t waiter = Waiter(b, 0, waiting, 30);
  assert_int_equal(waiting.Wait(), 'x');
  usleep(20 * 1000);
  // The queue is rewritten under them (zeroed, then a stray word): the
  // sleeping waiter finds its ticket outside the queue at its next look.
  memset(static_cast<void*>(&b->queue), 0, sizeof(b->queue));
  __atomic_store_n(&b->queue.first, 7u, __ATOMIC_SEQ_CST);
  assert_int_equal(WaitChild(waiter, 10), 0);
  assert_int_equal(b->turns.load(), 1);
  kill(first_holder, SIGKILL);
  WaitChild(first_holder);
  // A queue claiming a million waiters ahead is nonsense too: empty.
  __atomic_store_n(&b->queue.next, 0u, __ATOMIC_SEQ_CST);
  __atomic_store_n(&b->queue.first, 1u, __ATOMIC_SEQ_CST);
  assert_true(TicketQueue(&b->queue).Empty());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(TurnsComeInOrder),
      cmocka_unit_test(KilledWaiterIsPassedOver),
      cmocka_unit_test(ZombieWaiterIsPassedOver),
      cmocka_unit_test(TimedOutWaiterLeaves),
      cmocka_unit_test(EmptyPassesOverADeadFirstWaiter),
      cmocka_unit_test(UnrecordedTicketIsPassedOver),
      cmocka_unit_test(NonsenseSendsWaitersToTheLock),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
