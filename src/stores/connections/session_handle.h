// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// An owned database client handle (MYSQL*, PGconn*) whose server session
// belongs to the process that opened it.
//
// fork() copies the socket into the child, but the session, and with it
// every lock taken on it, stays the parent's. A child that sent anything on
// the socket, even the goodbye the client's close sends, would garble or end
// the parent's session and drop its locks. So the handle remembers the
// process that opened it, and closed in any other process it first points
// the descriptor number at /dev/null (DetachInheritedSocket(): dup3 swaps
// it atomically, so no other thread is handed the number in between); the
// client's close then frees the memory and the child's copy, and the
// goodbye goes nowhere. If /dev/null cannot be opened, the handle is leaked:
// the lesser harm.
//
// `Client` supplies `static int Socket(T*)` (-1 for none) and
// `static void Close(T*)`.

#ifndef IPCLOCK_STORES_SESSION_HANDLE_H_
#define IPCLOCK_STORES_SESSION_HANDLE_H_

#include <sys/types.h>

#include <utility>

#include "platform/process_id.h"
#include "platform/socket_wait.h"

namespace ipclock {

template <typename T, typename Client>
class SessionHandle {
 public:
  SessionHandle() = default;
  explicit SessionHandle(T* handle) : handle_(handle), pid_(CurrentPid()) {}
  SessionHandle(SessionHandle&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), pid_(other.pid_) {}
  SessionHandle& operator=(SessionHandle&& other) noexcept {
    if (this != &other) {
      Close();
      handle_ = std::exchange(other.handle_, nullptr);
      pid_ = other.pid_;
    }
    return *this;
  }
  SessionHandle(const SessionHandle&) = delete;
  SessionHandle& operator=(const SessionHandle&) = delete;
  ~SessionHandle() { Close(); }

  T* get() const { return handle_; }
  bool valid() const { return handle_ != nullptr; }
  // Whether this process opened the session (see above).
  bool ours() const { return handle_ != nullptr && pid_ == CurrentPid(); }

  void Close() {
    if (handle_ == nullptr) return;
    if (pid_ != CurrentPid()) {
      const int fd = Client::Socket(handle_);
      if (fd >= 0 && !DetachInheritedSocket(fd)) {
        // The descriptor still reaches the parent's session.
        handle_ = nullptr;
        return;
      }
    }
    Client::Close(std::exchange(handle_, nullptr));
  }

 private:
  T* handle_ = nullptr;
  pid_t pid_ = 0;
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SESSION_HANDLE_H_
