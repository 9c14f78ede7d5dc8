// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Starting the library's own threads. std::thread aborts the process when
// the thread cannot be made (it would throw, and the library is built
// without exceptions); a library must report that as an error instead.
// And keeping their mutexes usable across fork().

#ifndef IPCLOCK_PLATFORM_THREAD_H_
#define IPCLOCK_PLATFORM_THREAD_H_

#include <pthread.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ipclock {

// Runs `body` on a new joinable thread named `name` (at most 15 bytes, for
// /proc/PID/task/TID/comm), with every signal blocked, so that the
// program's signal handling stays on its own threads. The OS error
// (ResourceExhausted for EAGAIN) if it cannot be started. `stack_bytes`,
// when not 0, replaces the default stack size (8 MiB of address space each,
// too much for threads that only wait).
absl::Status StartThread(absl::string_view name, std::function<void()> body,
                         pthread_t* thread, size_t stack_bytes = 0);

// Waits for a thread of StartThread() to end, or lets it end alone.
void JoinThread(pthread_t thread);
void DetachThread(pthread_t thread);

// Runs `prepare` in the thread that calls fork() before the fork, and
// `after` in the parent and in the child after it (pthread_atfork): for
// taking the mutexes that a child would otherwise find held by a thread it
// does not have. The OS error (ResourceExhausted) if they cannot be
// registered.
absl::Status RegisterForkHandlers(void (*prepare)(), void (*after)());

// The mutexes of one kind of object (`Kind`: a tag type) that a fork()ed
// child must find free: each object adds its mutex while it lives. Around
// fork() the list's own mutex and then every mutex on it are taken, and
// let go in the parent and in the child. The lists live until exit: an
// object may be destroyed by a static destructor.
template <typename Kind>
class ForkHeldMutexes {
 public:
  // Adds `mu`, registering the fork handlers the first time (their error,
  // then and after, if that failed).
  static absl::Status Add(std::mutex* mu) {
    static const absl::Status* registered =
        new absl::Status(RegisterForkHandlers(&LockAll, &UnlockAll));
    if (!registered->ok()) return *registered;
    std::lock_guard<std::mutex> guard(ListMutex());
    List().push_back(mu);
    return absl::OkStatus();
  }
  static void Remove(std::mutex* mu) {
    std::lock_guard<std::mutex> guard(ListMutex());
    List().erase(std::remove(List().begin(), List().end(), mu), List().end());
  }

 private:
  static std::mutex& ListMutex() {
    static std::mutex* mu = new std::mutex();
    return *mu;
  }
  static std::vector<std::mutex*>& List() {
    static std::vector<std::mutex*>* list = new std::vector<std::mutex*>();
    return *list;
  }
  static void LockAll() {
    ListMutex().lock();
    for (std::mutex* mu : List()) mu->lock();
  }
  static void UnlockAll() {
    for (std::mutex* mu : List()) mu->unlock();
    ListMutex().unlock();
  }
};

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_THREAD_H_
