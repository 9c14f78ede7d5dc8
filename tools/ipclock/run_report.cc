// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "run_report.h"

#include <libgen.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exit_codes.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store_factory.h"
#include "terminal_text.h"
#include "time_calls.h"

namespace ipclock_cli {

namespace {

// The DSN that lists the store `options` names.
std::string ListingDsn(const RunOptions& options) {
  if (!options.file.empty()) {
    std::string dir = options.file;
    return absl::StrCat("flock://", dirname(dir.data()), "?naming=path");
  }
  return options.store_dsn.empty() ? std::string(ipclock::kDefaultDsn) : options.store_dsn;
}

// "pid 42 (backup, nightly.service) since 2026-05-01 02:00:00", as far as
// the store can tell; empty when it cannot.
std::string HolderText(const RunOptions& options, const std::string& resource) {
  ipclock::ListRequest request;
  request.resource = resource;
  absl::StatusOr<ipclock::HeldLocks> held = ipclock::ListHeldLocks(ListingDsn(options), request);
  if (!held.ok() || held->locks.empty()) return "";
  const ipclock::HeldLock& row = held->locks.front();
  std::string text;
  if (row.pid > 0) {
    std::vector<std::string> about;
    if (!row.command.empty()) about.push_back(row.command);
    if (!row.unit.empty()) about.push_back(row.unit);
    absl::StrAppend(&text, "pid ", row.pid);
    if (!about.empty()) absl::StrAppend(&text, " (", absl::StrJoin(about, ", "), ")");
  } else {
    text = "another owner";
  }
  if (row.since) {
    absl::StrAppend(&text, " since ",
                    absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixSeconds(*row.since),
                                     absl::LocalTimeZone()));
  }
  if (held->locks.size() > 1) {
    absl::StrAppend(&text, " and ", held->locks.size() - 1,
                    held->locks.size() == 2 ? " other" : " others");
  }
  return text;
}

// "3 in use: pid 42 (ipclock) 2, pid 43 (ipclock) 1": who holds a
// semaphore's permits, as far as the store can tell; empty when it cannot.
std::string PermitHoldersText(const RunOptions& options, const std::string& resource) {
  absl::StatusOr<ipclock::HeldSemaphore> sem =
      ipclock::ListHeldSemaphore(ListingDsn(options), resource, options.limit);
  if (!sem.ok()) return "";
  std::string text = absl::StrCat(sem->in_use, " in use");
  if (!sem->holders) {
    if (sem->last_pid > 0) absl::StrAppend(&text, ", the last taken or given by pid ", sem->last_pid);
    return text;
  }
  std::vector<std::string> holders;
  for (const ipclock::SemaphoreHolder& h : *sem->holders) {
    holders.push_back(absl::StrCat(
        h.pid > 0 ? absl::StrCat("pid ", h.pid) : "another owner",
        h.command.empty() ? "" : absl::StrCat(" (", Printable(h.command), ")"), " ", h.weight));
  }
  if (!holders.empty()) absl::StrAppend(&text, ": ", absl::StrJoin(holders, ", "));
  return text;
}

// " (slots 0 2)" of a slot semaphore held; empty for anything else.
std::string SlotsText(const RunOptions& options, const ipclock::Lock& lock) {
  const std::vector<uint32_t> slots = lock.slots();
  if (options.limit == 0 || slots.empty()) return "";
  return absl::StrCat(slots.size() == 1 ? " (slot " : " (slots ", absl::StrJoin(slots, " "), ")");
}

ipclock::Diagnostic Report(ipclock::DiagnosticKind kind, ipclock::DiagnosticSeverity severity,
                           const ipclock::Lock& lock, std::string text) {
  ipclock::Diagnostic d;
  d.kind = kind;
  d.severity = severity;
  d.store = lock.store().Describe();
  d.resource = lock.resource();
  d.fence = lock.fence();
  d.text = std::move(text);
  return d;
}

}  // namespace

std::string WhatText(const RunOptions& options, const ipclock::Lock& lock) {
  const std::string name = QuotedPrintable(lock.resource());
  if (options.limit == 0) return name;
  return absl::StrCat(options.weight, " of ", options.limit,
                      options.limit == 1 ? " permit of " : " permits of ", name);
}

RunReport::RunReport(const RunOptions& options)
    : options_(options),
      notify_(ServiceNotifier::FromEnvironment()),
      journal_(ipclock::StderrIsJournal()) {
  if (!options.command.empty()) {
    command_ = options.command.size() == 3 && options.command[0] == "/bin/sh"
                   ? "sh -c"
                   : options.command[0];
  }
}

RunReport::~RunReport() { DoneWaiting(); }

std::string RunReport::WaitingText(const ipclock::Lock& lock) const {
  if (options_.limit > 0) {
    const std::string holders = PermitHoldersText(options_, lock.resource());
    return absl::StrCat("waiting for ", WhatText(options_, lock), " on ", lock.store().Describe(),
                        holders.empty() ? "" : ", ", holders);
  }
  const std::string holder = HolderText(options_, lock.resource());
  return absl::StrCat("waiting for ", WhatText(options_, lock), " on ", lock.store().Describe(),
                      holder.empty() ? "" : ", held by ", holder);
}

void RunReport::Waiting(const ipclock::Lock& lock) {
  const std::string text = WaitingText(lock);
  if (journal_ || options_.verbose) {
    Tell(Report(ipclock::DiagnosticKind::kWaiting, ipclock::DiagnosticSeverity::kInfo, lock,
                text));
  }
  if (!notify_.active()) return;
  const std::string status = absl::StrCat("STATUS=", Printable(text));
  if (!options_.notify_wait) {
    notify_.Send(status);
    return;
  }
  std::lock_guard<std::mutex> guard(mu_);
  status_ = status;
  waited_lock_ = &lock;
  if (waiting_) return;
  waiting_ = true;
  // A thread of its own: the main thread sleeps in the store's wait, which
  // a timer must not interrupt. It ends before COMMAND starts (see
  // child_process.h on threads and blocked signals).
  keep_alive_ = std::thread([this] { KeepAlive(); });
}

void RunReport::KeepAlive() {
  std::unique_lock<std::mutex> guard(mu_);
  bool first = true;
  while (waiting_) {
    if (!first && waited_lock_ != nullptr) {
      // The holder may have changed: another waiter got it first.
      const ipclock::Lock* lock = waited_lock_;
      guard.unlock();
      std::string status = absl::StrCat("STATUS=", Printable(WaitingText(*lock)));
      guard.lock();
      if (!waiting_) break;
      status_ = std::move(status);
    }
    first = false;
    const std::string message =
        absl::StrCat(status_, "\nEXTEND_TIMEOUT_USEC=",
                     absl::ToInt64Microseconds(kKeepAliveExtension));
    guard.unlock();
    notify_.Send(message);
    guard.lock();
    WaitOnCondition(wake_, guard, kKeepAliveEvery, [this] { return !waiting_; });
  }
}

void RunReport::DoneWaiting() {
  {
    std::lock_guard<std::mutex> guard(mu_);
    waiting_ = false;
    waited_lock_ = nullptr;
  }
  wake_.notify_all();
  if (keep_alive_.joinable()) keep_alive_.join();
}

void RunReport::Acquired(const ipclock::Lock& lock, absl::Duration waited) {
  DoneWaiting();
  if (!journal_ && !options_.verbose) return;
  const std::string name = QuotedPrintable(lock.resource());
  Tell(Report(ipclock::DiagnosticKind::kAcquired, ipclock::DiagnosticSeverity::kInfo, lock,
              absl::StrCat("acquired ", WhatText(options_, lock), SlotsText(options_, lock),
                           " on ", lock.store().Describe(), " after ",
                           absl::FormatDuration(absl::Trunc(waited, absl::Microseconds(1))),
                           ", fence ",
                           lock.fence() ? absl::StrCat(*lock.fence())
                                        : "none (this store has no fencing tokens)")));
  if (lock.previous_owner_died()) {
    Tell(Report(ipclock::DiagnosticKind::kOwnerDied, ipclock::DiagnosticSeverity::kWarning, lock,
                absl::StrCat("the previous holder of ", name, " died holding it")));
  }
}

void RunReport::Held(const std::vector<ipclock::Lock>& locks) {
  if (!notify_.active() || locks.empty()) return;
  std::vector<std::string> names;
  for (const ipclock::Lock& lock : locks) {
    names.push_back(absl::StrCat(WhatText(options_, lock), SlotsText(options_, lock)));
  }
  const ipclock::Lock& first = locks.front();
  held_ = absl::StrCat("holding ", absl::StrJoin(names, ", "), " on ", first.store().Describe(),
                       first.fence() ? absl::StrCat(" (fence ", *first.fence(), ")") : "");
}

void RunReport::Running(pid_t pid) {
  if (!notify_.active()) return;
  notify_.Send(absl::StrCat(options_.notify_ready ? "READY=1\n" : "", "STATUS=",
                            Printable(absl::StrCat(held_, "; running ", command_, " as pid ",
                                                   pid))));
}

void RunReport::Lost(const std::string& what) {
  if (!notify_.active()) return;
  notify_.Send(absl::StrCat("STATUS=", Printable(what)));
}

}  // namespace ipclock_cli
