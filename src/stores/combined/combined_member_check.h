// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A check of one member of a combined lock (combined_store.cc) on a thread
// of its own, so that a member whose server is slow or stopped holds up no
// verdict that the other members' answers decide already: one frozen Redis
// beside a lock file that was deleted must not keep the loss of a
// unanimous lock untold for its command timeout.
//
// The key stays the owner's. The member's state in it is lent to a twin of
// the key (Key::Twin()) for as long as the check runs, and given back by
// Finish(); until then the member holds nothing in the key, so every other
// call on that member must Finish() its check first. The check's thread
// uses only the twin and the member, both owned here. A release need not
// wait for a check that its server has not answered: LeaveToRelease()
// hands the member's part to the check's thread, which releases it once
// the check returns (or never, if the process ends first: the member's
// lease or session then ends it).
//
// fork(): a child has the check but not its thread. Its copy is left alone
// (leaked, with the member's state in the twin): the lock is the parent's.

#ifndef IPCLOCK_STORES_COMBINED_MEMBER_CHECK_H_
#define IPCLOCK_STORES_COMBINED_MEMBER_CHECK_H_

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "absl/status/status.h"
#include "ipclock/spi/key.h"
#include "ipclock/store.h"

namespace ipclock {

// Where the checks of one key say that they finished.
struct MemberCheckBoard {
  std::mutex mu;
  std::condition_variable cv;
};

class MemberCheck {
 public:
  // Lends `member`'s state in `key` to a twin and checks it on a new
  // thread, which notifies `board` when done. Null, with the state left in
  // `key`, when no thread can be made, or when `member` keeps no state of
  // its own in `key` (a wrapper such as degraded mode's, whose fallback
  // keeps it): the caller checks on its own thread.
  static std::unique_ptr<MemberCheck> Start(std::shared_ptr<Store> member, Key& key,
                                            std::shared_ptr<MemberCheckBoard> board);

  MemberCheck(const MemberCheck&) = delete;
  MemberCheck& operator=(const MemberCheck&) = delete;
  // Waits for the check (Finish() without giving the state back).
  ~MemberCheck();

  bool done() const { return done_.load(std::memory_order_acquire); }
  // Waits for the check to end, gives the member's state back to `key` and
  // returns what the check said.
  absl::Status Finish(Key& key);
  // If the check has not ended: lets its thread release the member's part
  // once it does, and then free this object; the caller must then let go of
  // it without destroying it (unique_ptr::release()). False if the check has
  // ended: Finish() it.
  bool LeaveToRelease();
  // Whether this is a forked child's copy, whose thread stayed with the
  // parent: it never finishes here.
  bool Orphaned() const;

 private:
  MemberCheck(std::shared_ptr<Store> member, Key twin, std::shared_ptr<MemberCheckBoard> board);
  void Join();

  const std::shared_ptr<Store> member_;
  Key twin_;
  const std::shared_ptr<MemberCheckBoard> board_;
  const pid_t pid_;
  pthread_t thread_{};
  bool joined_ = false;  // or detached
  std::atomic<bool> done_{false};
  absl::Status result_;  // written by the thread before `done_`
  bool leave_ = false;   // guarded by board_->mu
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_COMBINED_MEMBER_CHECK_H_
