// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/combined/combined_member_check.h"

#include <utility>

#include "ipclock/spi/key_state.h"
#include "ipclock/spi/store_interface.h"
#include "platform/process_id.h"
#include "platform/thread.h"

namespace ipclock {

MemberCheck::MemberCheck(std::shared_ptr<Store> member, Key twin,
                         std::shared_ptr<MemberCheckBoard> board)
    : member_(std::move(member)), twin_(std::move(twin)), board_(std::move(board)),
      pid_(CurrentPid()) {}

std::unique_ptr<MemberCheck> MemberCheck::Start(std::shared_ptr<Store> member, Key& key,
                                                std::shared_ptr<MemberCheckBoard> board) {
  std::unique_ptr<MemberCheck> check(
      new MemberCheck(std::move(member), key.Twin(), std::move(board)));
  if (!KeyWriter(key).MoveState(*check->member_, check->twin_)) {
    check->joined_ = true;  // nothing to join
    return nullptr;
  }
  MemberCheck* self = check.get();
  absl::Status started = StartThread(
      "ipclock-member",
      [self] {
        absl::Status result = StoreCalls::CheckHeld(*self->member_, self->twin_);
        bool release = false;
        {
          std::lock_guard<std::mutex> guard(self->board_->mu);
          self->result_ = std::move(result);
          self->done_.store(true, std::memory_order_release);
          release = self->leave_;
          self->board_->cv.notify_all();
        }
        // Nobody waits for this check any more: the release is ours.
        if (release) {
          StoreCalls::Release(*self->member_, self->twin_).IgnoreError();
          delete self;
        }
      },
      &check->thread_);
  if (!started.ok()) {
    KeyWriter(check->twin_).MoveState(*check->member_, key);
    check->joined_ = true;  // nothing to join
    return nullptr;
  }
  return check;
}

bool MemberCheck::Orphaned() const { return pid_ != CurrentPid(); }

void MemberCheck::Join() {
  if (joined_) return;
  joined_ = true;
  JoinThread(thread_);
}

MemberCheck::~MemberCheck() {
  if (!Orphaned()) Join();
}

bool MemberCheck::LeaveToRelease() {
  const pthread_t thread = thread_;
  {
    std::lock_guard<std::mutex> guard(board_->mu);
    if (done()) return false;
    leave_ = true;
    // From here on the thread may free this object, once it has the mutex.
    joined_ = true;
  }
  DetachThread(thread);
  return true;
}

absl::Status MemberCheck::Finish(Key& key) {
  Join();
  KeyWriter(twin_).MoveState(*member_, key);
  return result_;
}

}  // namespace ipclock
