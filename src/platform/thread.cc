// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/thread.h"

#include <signal.h>

#include <memory>
#include <string>
#include <utility>

#include "platform/errors.h"

namespace ipclock {
namespace {

struct Start {
  std::string name;
  std::function<void()> body;
};

void* Trampoline(void* arg) {
  std::unique_ptr<Start> start(static_cast<Start*>(arg));
  pthread_setname_np(pthread_self(), start->name.c_str());
  start->body();
  return nullptr;
}

}  // namespace

absl::Status StartThread(absl::string_view name, std::function<void()> body,
                         pthread_t* thread, size_t stack_bytes) {
  auto start = std::make_unique<Start>();
  start->name = std::string(name.substr(0, 15));
  start->body = std::move(body);
  // The new thread inherits the mask: block everything around the create.
  sigset_t all, old;
  sigfillset(&all);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (stack_bytes != 0) pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int err = pthread_create(thread, &attr, Trampoline, start.get());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  if (err != 0) return ErrnoError(err, "ipclock", "", "pthread_create");
  start.release();  // the thread owns it now
  return absl::OkStatus();
}

void JoinThread(pthread_t thread) { pthread_join(thread, nullptr); }

void DetachThread(pthread_t thread) { pthread_detach(thread); }

absl::Status RegisterForkHandlers(void (*prepare)(), void (*after)()) {
  int err = pthread_atfork(prepare, after, after);
  if (err != 0) return ErrnoError(err, "ipclock", "", "pthread_atfork");
  return absl::OkStatus();
}

}  // namespace ipclock
