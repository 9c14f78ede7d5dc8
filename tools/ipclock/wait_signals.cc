// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "wait_signals.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"
#include "time_calls.h"

namespace ipclock_cli {

namespace {

constexpr int kWaitSignals[] = {SIGINT, SIGTERM, SIGHUP};

// What the handler reads; lock-free atomics, so that it may.
std::atomic<bool> g_deferred{false};
std::atomic<ipclock::Canceller*> g_canceller{nullptr};
std::atomic<int> g_received{0};
// Where the canceller's descriptor, or -1: what a sleep polls.
std::atomic<int> g_wake_fd{-1};

struct sigaction g_previous[sizeof(kWaitSignals) / sizeof(kWaitSignals[0])];
bool g_installed[sizeof(kWaitSignals) / sizeof(kWaitSignals[0])];

void OnWaitSignal(int sig) {
  if (!g_deferred.load()) {
    // As the default action: the signal, blocked while this runs, is
    // delivered again as soon as it returns.
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  int none = 0;
  g_received.compare_exchange_strong(none, sig);
  if (ipclock::Canceller* c = g_canceller.load()) c->Cancel();
}

}  // namespace

void InstallWaitSignals() {
  for (size_t i = 0; i < sizeof(kWaitSignals) / sizeof(kWaitSignals[0]); ++i) {
    struct sigaction current;
    if (sigaction(kWaitSignals[i], nullptr, &current) != 0) continue;
    // Ignored (nohup, a background job's SIGINT): not ours to act on.
    if (current.sa_handler == SIG_IGN) continue;
    struct sigaction sa = {};
    sa.sa_handler = OnWaitSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a sleep in the kernel is interrupted
    if (sigaction(kWaitSignals[i], &sa, &g_previous[i]) == 0) g_installed[i] = true;
  }
}

void DeferWaitSignals(ipclock::Canceller* canceller) {
  if (canceller != nullptr) {
    g_canceller.store(canceller);
    g_wake_fd.store(canceller->fd());
  }
  g_deferred.store(true);
}

void RestoreWaitSignals() {
  for (size_t i = 0; i < sizeof(kWaitSignals) / sizeof(kWaitSignals[0]); ++i) {
    if (!g_installed[i]) continue;
    sigaction(kWaitSignals[i], &g_previous[i], nullptr);
    g_installed[i] = false;
  }
  g_canceller.store(nullptr);
  g_wake_fd.store(-1);
}

int WaitSignalReceived() { return g_received.load(); }

void SleepUnlessSignalled(absl::Duration d) {
  const int fd = g_wake_fd.load();
  if (fd < 0) {
    Sleep(d);
    return;
  }
  const ipclock::Deadline end = ipclock::Deadline::In(d);
  while (WaitSignalReceived() == 0 && !end.has_passed()) {
    // Rounded up: a wake before the end would only sleep again.
    const int64_t left_ms = (absl::ToInt64Nanoseconds(end.Remaining()) + 999999) / 1000000;
    struct pollfd p = {fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1 << 30)));
    if (ready > 0 || (ready < 0 && errno != EINTR)) return;
  }
}

void DieBySignal(int sig) {
  fflush(nullptr);
  signal(sig, SIG_DFL);
  sigset_t just;
  sigemptyset(&just);
  sigaddset(&just, sig);
  raise(sig);
  // Blocked (COMMAND's runner blocks it): pending until unblocked here.
  sigprocmask(SIG_UNBLOCK, &just, nullptr);
}

}  // namespace ipclock_cli
