// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// WatchCore's event thread: what is due, the wait for it, and what fired.

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/watch_core.h"
#include "platform/kernel_events.h"

namespace ipclock {
namespace internal {

WatchCore::Plan WatchCore::MakePlan(int64_t now) {
  Plan plan;
  int64_t earliest = kNever;
  if (next_probe_ != kNever) {
    absl::flat_hash_set<const WatchProbe*> seen;
    for (const std::shared_ptr<WatchEntry>& e : entries_) {
      if (e->probe != nullptr && seen.insert(e->probe.get()).second) {
        plan.probes.push_back(e->probe);
      }
    }
    if (plan.probes.empty()) {
      next_probe_ = kNever;
    } else {
      plan.probes_due = now >= next_probe_;
      if (plan.probes_due) next_probe_ = now + kProbeNanos;
      plan.next_probe = next_probe_;
    }
  }
  absl::flat_hash_set<const WatchEventSource*> sources;
  std::vector<size_t> early;  // entries_'s indices of those not due yet
  for (size_t i = 0; i < entries_.size(); ++i) {
    const std::shared_ptr<WatchEntry>& e = entries_[i];
    int64_t lease_end;
    bool lost;
    {
      std::lock_guard<std::mutex> guard(e->state_mu);
      lease_end = e->lease_end;
      lost = e->lost;
    }
    if (lost) continue;
    if (lease_end <= now && e->in_flight) {
      // Its check or renewal has not come back, and the lease is over.
      plan.expired.push_back(e);
      continue;
    }
    earliest = std::min(earliest, lease_end);
    if (e->events != nullptr && sources.insert(e->events.get()).second) {
      plan.sources.push_back(e->events);
    }
    if (e->in_flight) continue;
    if (e->check_now || e->next_check <= now || e->next_renew <= now || lease_end <= now) {
      plan.due.push_back(e);
      continue;
    }
    early.push_back(i);
  }
  // Checks due by now take along those due within half their interval:
  // checked early, never late, the locks of a watch soon fall into step and
  // are checked in one wake-up an interval rather than one each.
  const bool some_due = !plan.due.empty();
  for (size_t i : early) {
    const std::shared_ptr<WatchEntry>& e = entries_[i];
    if (some_due && e->next_check - e->interval_nanos / 2 <= now) {
      plan.due.push_back(e);
      continue;
    }
    earliest = std::min({earliest, e->next_check, e->next_renew});
    if (!e->poll_quiet) {
      plan.poll_fds.insert(plan.poll_fds.end(), e->poll_fds.begin(), e->poll_fds.end());
    }
  }
  plan.earliest_other = earliest;
  earliest = std::min(earliest, plan.next_probe);
  // The probes planned here run before the wait, which needs no new plan.
  if (!plan.due.empty() || !plan.expired.empty()) {
    plan.timeout_ms = 0;
  } else if (earliest == kNever) {
    plan.timeout_ms = -1;
  } else {
    // Rounded up: waking a little late is harmless, early would spin.
    plan.timeout_ms = static_cast<int>(
        std::min<int64_t>((earliest - now + 999999) / 1000000, 60 * 60 * 1000));
  }
  return plan;
}

void WatchCore::Mark(const KernelEvents::Fired& fired) {
  for (const std::shared_ptr<WatchEntry>& e : entries_) {
    bool hit = fired.overflow || (fired.mounts && e->mounts);
    for (int wd : fired.wds) hit = hit || std::count(e->wds.begin(), e->wds.end(), wd) > 0;
    for (int fd : fired.poll_fds) {
      if (std::count(e->poll_fds.begin(), e->poll_fds.end(), fd) > 0) {
        hit = true;
        e->poll_quiet = true;
      }
    }
    if (hit) e->check_now = true;
  }
}

bool WatchCore::RunProbes(const std::vector<std::shared_ptr<WatchProbe>>& probes) {
  bool changed = false;
  for (const std::shared_ptr<WatchProbe>& probe : probes) {
    if (!probe->Changed()) continue;
    std::lock_guard<std::mutex> guard(mu_);
    MarkProbe(probe.get());
    changed = true;
  }
  return changed;
}

void WatchCore::MarkProbe(const WatchProbe* probe) {
  for (const std::shared_ptr<WatchEntry>& e : entries_) {
    if (e->probe.get() == probe) e->check_now = true;
  }
}

void WatchCore::MarkSource(const WatchEventSource* source, bool all,
                           const absl::flat_hash_set<std::string>& tags) {
  for (const std::shared_ptr<WatchEntry>& e : entries_) {
    if (e->events.get() != source || (!all && !tags.contains(e->event_tag))) continue;
    e->check_now = true;
    // Tracking of a key ends with the change it reported: ask again.
    e->follow = true;
    if (all) e->followed = false;
  }
}

void WatchCore::Run() {
  for (;;) {
    Plan plan;
    {
      std::lock_guard<std::mutex> guard(mu_);
      if (stop_) return;
      plan = MakePlan(Now());
      plan.mounts_fd = events_->mounts_fd();
    }
    for (const std::shared_ptr<WatchEntry>& e : plan.expired) DeclareLeaseEnd(e);
    if (plan.probes_due && RunProbes(plan.probes)) continue;  // the next plan has them due
    if (!plan.due.empty()) {
      const int64_t now = Now();
      for (const std::shared_ptr<WatchEntry>& e : plan.due) Dispatch(e, now);
      continue;
    }
    if (plan.timeout_ms == 0) continue;
    std::vector<int> poll_fds = plan.poll_fds;
    std::vector<const WatchEventSource*> source_of_fd;
    source_of_fd.resize(poll_fds.size(), nullptr);
    for (const std::shared_ptr<WatchEventSource>& source : plan.sources) {
      const int fd = source->fd();
      if (fd < 0) continue;
      poll_fds.push_back(fd);
      source_of_fd.push_back(source.get());
    }
    // events_ is set before the thread starts and replaced only in a
    // child, where this thread does not exist.
    KernelEvents::Fired fired = events_->Wait(poll_fds, plan.mounts_fd, plan.timeout_ms);
    // While nothing happens, the wake-ups are the probes', 20 a second: they
    // run, and the thread sleeps again, without a new plan, which walks
    // every entry (for 100 watched locks that cost more than the probes).
    // Anything fired or woken, a change probed, or a check, renewal or
    // lease end due ends it.
    int64_t next_probe = plan.next_probe;
    bool probed_change = false;
    while (!fired.any() && !plan.probes.empty()) {
      const int64_t now = Now();
      if (now >= plan.earliest_other) break;
      if (now >= next_probe) {
        next_probe = now + kProbeNanos;
        if (RunProbes(plan.probes)) {
          probed_change = true;
          break;
        }
      }
      const int64_t until = std::min(next_probe, plan.earliest_other);
      fired = events_->Wait(poll_fds, plan.mounts_fd,
                            static_cast<int>((until - now + 999999) / 1000000));
    }
    if (next_probe != plan.next_probe) {
      std::lock_guard<std::mutex> guard(mu_);
      if (next_probe_ != kNever) next_probe_ = std::max(next_probe_, next_probe);
    }
    if (probed_change) continue;
    // Event sources first, without mu_: draining reads a socket.
    for (const std::shared_ptr<WatchEventSource>& source : plan.sources) {
      const int fd = source->fd();
      const bool ready = fd >= 0 && std::count(fired.poll_fds.begin(), fired.poll_fds.end(), fd);
      if (!ready) continue;
      absl::flat_hash_set<std::string> tags;
      const bool some =
          source->Drain([&tags](absl::string_view tag) { tags.insert(std::string(tag)); });
      std::lock_guard<std::mutex> guard(mu_);
      MarkSource(source.get(), !some, tags);
    }
    std::lock_guard<std::mutex> guard(mu_);
    Mark(fired);
  }
}

}  // namespace internal
}  // namespace ipclock
