// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// async_example: waits for many locks from one epoll loop and prints each
// acquisition as it happens.
//
//   async_example [DSN] [COUNT] [TIMEOUT_SECONDS]
//   async_example shm://demo 100 30
//
// Run `ipclock run --store shm://demo --key job-7 -- sleep 5` beside it to
// see job-7 come last. Each lock is held for 100 ms (a timer in the same
// loop) and then released, so runs in parallel take turns.

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ipclock/async.h"
#include "ipclock/lock.h"
#include "ipclock/store_factory.h"

namespace {

// Releases every held lock whose 100 ms are up.
struct Holding {
  ipclock::Lock* lock;
  int timer_fd;
};

int Run(const std::string& dsn, int count, double timeout_sec) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) {
    fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 64;
  }
  absl::StatusOr<std::unique_ptr<ipclock::AsyncWaiter>> waiter =
      ipclock::AsyncWaiter::Create();
  if (!waiter.ok()) {
    fprintf(stderr, "%s\n", waiter.status().ToString().c_str());
    return 71;
  }
  printf("waiting for %d locks on %s (%s)\n", count, dsn.c_str(),
         (*waiter)->uses_io_uring() ? "io_uring" : "helper threads");

  // Locks must outlive their waits: they live here until the loop ends.
  std::vector<ipclock::Lock> locks;
  locks.reserve(count);
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<ipclock::Lock> lock =
        ipclock::Lock::Create(*store, absl::StrCat("job-", i));
    if (!lock.ok()) {
      fprintf(stderr, "%s\n", lock.status().ToString().c_str());
      return 64;
    }
    locks.push_back(*std::move(lock));
  }

  const int ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {};
  ev.events = EPOLLIN;
  ev.data.fd = (*waiter)->fd();
  epoll_ctl(ep, EPOLL_CTL_ADD, (*waiter)->fd(), &ev);

  int remaining = count;
  int failures = 0;
  std::vector<Holding> held;
  for (ipclock::Lock& lock : locks) {
    absl::Status started =
        (*waiter)
            ->Start(lock, ipclock::LockMode::kExclusive, absl::Seconds(timeout_sec),
                    [&, ep](const ipclock::AsyncResult& r) {
                      --remaining;
                      const std::string& name = r.lock->resource();
                      if (!r.status.ok()) {
                        ++failures;
                        printf("%s: %s\n", name.c_str(), r.status.ToString().c_str());
                        return;
                      }
                      printf("%s: acquired (fence %llu)\n", name.c_str(),
                             static_cast<unsigned long long>(r.lock->fence().value_or(0)));
                      // Hold it for 100 ms, then release from the same loop.
                      int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
                      struct itimerspec its = {};
                      its.it_value.tv_nsec = 100 * 1000 * 1000;
                      timerfd_settime(tfd, 0, &its, nullptr);
                      struct epoll_event tev = {};
                      tev.events = EPOLLIN;
                      tev.data.fd = tfd;
                      epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &tev);
                      held.push_back({r.lock, tfd});
                    })
            .status();
    if (!started.ok()) {
      fprintf(stderr, "%s\n", started.ToString().c_str());
      return 71;
    }
  }

  while (remaining > 0 || !held.empty()) {
    struct epoll_event events[16];
    const int n = epoll_wait(ep, events, 16, -1);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == (*waiter)->fd()) {
        (*waiter)->ProcessReady();
        continue;
      }
      for (size_t h = 0; h < held.size(); ++h) {
        if (held[h].timer_fd != events[i].data.fd) continue;
        held[h].lock->Release().IgnoreError();
        close(held[h].timer_fd);  // also leaves the epoll set
        held.erase(held.begin() + static_cast<long>(h));
        break;
      }
    }
  }
  close(ep);
  printf("done: %d acquired, %d not\n", count - failures, failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dsn = argc > 1 ? argv[1] : "flock";
  const int count = argc > 2 ? atoi(argv[2]) : 10;
  const double timeout = argc > 3 ? atof(argv[3]) : 30;
  if (count < 1) {
    fprintf(stderr, "usage: async_example [DSN] [COUNT] [TIMEOUT_SECONDS]\n");
    return 64;
  }
  return Run(dsn, count, timeout);
}
