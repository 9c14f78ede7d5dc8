// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "run_command.h"

#include <stdio.h>
#include <stdlib.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "child_process.h"
#include "exit_codes.h"
#include "ipclock/deadline.h"
#include "ipclock/flock_store.h"
#include "ipclock/lock.h"
#include "ipclock/store_factory.h"

namespace ipclock_cli {

namespace {

void PrintError(const absl::Status& status) { ipclock_cli::PrintError("ipclock", status); }

std::string Quoted(absl::string_view resource) {
  return absl::StrCat("\"", absl::CHexEscape(resource), "\"");
}

std::string Millis(int64_t nanos) {
  return absl::StrCat(static_cast<double>(nanos / 1000) / 1000.0, " ms");
}

absl::StatusOr<std::shared_ptr<ipclock::Store>> OpenStore(const RunOptions& options) {
  if (!options.file.empty()) {
    ipclock::FlockStoreOptions flock_options;
    flock_options.naming = ipclock::FlockStoreOptions::Naming::kPath;
    return ipclock::NewFlockStore(flock_options);
  }
  return ipclock::StoreFromDsn(options.store_dsn.empty()
                                   ? ipclock::kDefaultDsn
                                   : absl::string_view(options.store_dsn));
}

// Takes `lock` by `deadline`. Returns nullopt once held, else the exit
// status to leave with.
std::optional<int> AcquireOne(ipclock::Lock& lock, const RunOptions& options,
                              ipclock::Deadline deadline) {
  const std::string name = Quoted(lock.resource());
  const bool shared = options.mode == ipclock::LockMode::kShared;
  if (options.verbose) {
    fprintf(stderr, "ipclock: acquiring %s lock on %s in %s (%s)\n",
            shared ? "shared" : "exclusive", name.c_str(),
            lock.store().Describe().c_str(),
            options.wait == absl::ZeroDuration()
                ? "trying once"
                : options.wait == absl::InfiniteDuration()
                      ? "waiting as long as it takes"
                      : absl::StrCat("waiting up to ",
                                     absl::FormatDuration(options.wait))
                            .c_str());
  }
  const int64_t start = ipclock::Deadline::NowNanos();
  absl::Status status;
  if (options.wait == absl::ZeroDuration()) {
    absl::StatusOr<bool> got = lock.TryAcquire(options.mode);
    if (!got.ok()) {
      status = got.status();
    } else if (!*got) {
      status = absl::DeadlineExceededError("busy");
    }
  } else {
    status = lock.Acquire(
        deadline.is_never() ? absl::InfiniteDuration() : deadline.Remaining(),
        options.mode);
  }
  const int64_t took = ipclock::Deadline::NowNanos() - start;
  if (status.code() == absl::StatusCode::kDeadlineExceeded) {
    // Silent by default, as flock(1) is: a busy lock is an expected outcome.
    if (options.verbose) {
      fprintf(stderr, "ipclock: %s is held by another owner; gave up after %s\n",
              name.c_str(), Millis(took).c_str());
    }
    return options.conflict_exit_code;
  }
  if (!status.ok()) {
    PrintError(status);
    return ExitCodeForStatus(status);
  }
  if (options.verbose) {
    fprintf(stderr, "ipclock: acquired %s after %s, fence %s\n", name.c_str(),
            Millis(took).c_str(),
            lock.fence() ? absl::StrCat(*lock.fence()).c_str()
                         : "none (this store has no fencing tokens)");
    if (lock.previous_owner_died()) {
      fprintf(stderr, "ipclock: the previous holder of %s died holding it\n",
              name.c_str());
    }
  }
  return std::nullopt;
}

// Releases in the reverse of the acquisition order. Returns the first error.
absl::Status ReleaseAll(std::vector<ipclock::Lock>& locks, bool verbose) {
  absl::Status first;
  for (auto it = locks.rbegin(); it != locks.rend(); ++it) {
    if (!it->is_acquired()) continue;
    absl::Status s = it->Release();
    if (!s.ok()) {
      PrintError(s);
      if (first.ok()) first = s;
    } else if (verbose) {
      fprintf(stderr, "ipclock: released %s\n", Quoted(it->resource()).c_str());
    }
  }
  return first;
}

// The command learns what it holds through its environment. Values from an
// enclosing `ipclock run` are cleared, not inherited, where this run has
// none of its own.
void ExportLockEnvironment(const std::vector<ipclock::Lock>& locks,
                           const ipclock::Store& store) {
  std::vector<absl::string_view> resources;
  bool died = false;
  for (const ipclock::Lock& lock : locks) {
    resources.push_back(lock.resource());
    died = died || lock.previous_owner_died();
  }
  setenv("IPCLOCK_RESOURCE", locks.front().resource().c_str(), 1);
  setenv("IPCLOCK_RESOURCES", absl::StrJoin(resources, "\n").c_str(), 1);
  setenv("IPCLOCK_STORE", store.Describe().c_str(), 1);
  if (std::optional<uint64_t> fence = locks.front().fence()) {
    setenv("IPCLOCK_FENCE", absl::StrCat(*fence).c_str(), 1);
  } else {
    unsetenv("IPCLOCK_FENCE");
  }
  if (died) {
    setenv("IPCLOCK_PREVIOUS_OWNER_DIED", "1", 1);
  } else {
    unsetenv("IPCLOCK_PREVIOUS_OWNER_DIED");
  }
}

}  // namespace

int RunCommand(const RunOptions& options, const sigset_t& child_mask) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(options);
  if (!store.ok()) {
    PrintError(store.status());
    return ExitCodeForStatus(store.status());
  }
  const std::vector<std::string> resources =
      options.file.empty() ? options.keys : std::vector<std::string>{options.file};

  ipclock::LockOptions lock_options;
  lock_options.permits = options.permits;
  std::vector<ipclock::Lock> locks;
  locks.reserve(resources.size());
  for (const std::string& resource : resources) {
    absl::StatusOr<ipclock::Lock> lock =
        ipclock::Lock::Create(*store, resource, lock_options);
    if (!lock.ok()) {
      PrintError(lock.status());
      return ExitCodeForStatus(lock.status());
    }
    locks.push_back(*std::move(lock));
  }

  // One deadline for all the locks: -w bounds the whole acquisition.
  const ipclock::Deadline deadline = ipclock::Deadline::In(options.wait);
  for (ipclock::Lock& lock : locks) {
    if (std::optional<int> failed = AcquireOne(lock, options, deadline)) {
      ReleaseAll(locks, options.verbose).IgnoreError();
      return *failed;
    }
  }

  ExportLockEnvironment(locks, **store);
  // A lease must outlast the command: renew it at a third of its length, so
  // that one late renewal still leaves time for the next.
  absl::Status lease_lost;
  absl::Duration renew_every = absl::InfiniteDuration();
  if ((*store)->capabilities().expiring) renew_every = lock_options.ttl / 3;
  const int child_status = RunChild(options.command, child_mask, renew_every, [&]() {
    for (ipclock::Lock& lock : locks) {
      absl::Status s = lock.Refresh();
      if (!s.ok() && lease_lost.ok()) {
        // The command already runs and cannot be un-run; say so loudly and
        // fail the run once it ends.
        PrintError(s);
        lease_lost = s;
      }
    }
  });
  absl::Status released = ReleaseAll(locks, options.verbose);
  if (!lease_lost.ok()) released = lease_lost;
  // As RunLocked does: a failed release outranks only a successful command.
  if (!released.ok() && child_status == 0) return ExitCodeForStatus(released);
  return child_status;
}

}  // namespace ipclock_cli
