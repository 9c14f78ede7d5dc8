// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Keeping SIGPIPE from the program around a write that a client library
// makes with write(2) or send(2) without MSG_NOSIGNAL (OpenSSL's socket
// BIO, under MariaDB Connector/C's TLS connections). A write to a socket
// whose peer has gone raises SIGPIPE, whose default action kills the
// process; a library must neither die of it nor change the program's
// dispositions.

#ifndef IPCLOCK_PLATFORM_SIGPIPE_BLOCK_H_
#define IPCLOCK_PLATFORM_SIGPIPE_BLOCK_H_

#include <signal.h>

namespace ipclock {

// Blocks SIGPIPE in this thread while it lives. A SIGPIPE raised meanwhile
// (a thread-directed signal, as a write raises it) is taken back before the
// old mask returns, unless one was already pending for the program itself.
class SigpipeBlock {
 public:
  SigpipeBlock();
  ~SigpipeBlock();
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SIGPIPE_BLOCK_H_
