// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/sigpipe_block.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

namespace ipclock {

namespace {

bool SigpipePending() {
  sigset_t pending;
  sigemptyset(&pending);
  return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

}  // namespace

SigpipeBlock::SigpipeBlock() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  was_pending_ = SigpipePending();
  pthread_sigmask(SIG_BLOCK, &pipe, &old_);
}

SigpipeBlock::~SigpipeBlock() {
  if (!was_pending_ && SigpipePending()) {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    const struct timespec now = {0, 0};
    int r;
    do {
      r = sigtimedwait(&pipe, nullptr, &now);
    } while (r < 0 && errno == EINTR);
  }
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

}  // namespace ipclock
