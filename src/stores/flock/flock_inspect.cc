// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Caveats of listing from /proc/locks are in platform/proc_locks.h: the pid
// is the process that took the lock, which may have passed the descriptor on
// and exited, and other pid namespaces' pids mean nothing here.

#include "stores/flock/flock_inspect.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/dsn.h"
#include "ipclock/stores/flock_store.h"
#include "platform/dir_scan.h"
#include "platform/proc_locks.h"
#include "platform/proc_pid.h"
#include "stores/flock/flock_record.h"
#include "stores/flock/flock_store.h"

namespace ipclock {

namespace {

// "sf.<readable>.<7 chars>.lock" -> "<readable>"; empty for other names.
std::string ReadablePart(absl::string_view name) {
  constexpr absl::string_view kPrefix = "sf.";
  constexpr size_t kSuffix = 13;  // ".<7 chars>.lock"
  if (!absl::StartsWith(name, kPrefix) || !absl::EndsWith(name, ".lock") ||
      name.size() < kPrefix.size() + kSuffix) {
    return "";
  }
  return std::string(name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix));
}

// The holder record's fields, when the file has one of its holder's, the
// Locks queued behind the waiter in flock(2) by `fair=true` stores, and the
// resource's name where the file keeps it (`name_it`: only its readable part
// is known yet).
void AddHolderRecord(const std::string& path, absl::string_view file_name, bool name_it,
                     const ProcFlockLock& l, absl::string_view who, HeldLock* row) {
  // Reading needs no lock: the record is copied once and only the copy is
  // parsed (flock_record.h).
  absl::StatusOr<FileHead> head =
      ReadFileHead(path, std::max(FlockHolderRecordSize(), FlockQueueSize()), who);
  if (!head.ok()) return;
  if (name_it) {
    // Trusted only if the file is named after it.
    std::optional<std::string> name = ParseFlockName(head->bytes);
    if (name && FlockFileName(*name) == file_name) row->resource = *std::move(name);
  }
  if (const int64_t queued = FlockQueueLength(head->bytes); queued > 0) {
    // The first of them waits in flock(2), where /proc/locks counted it.
    row->waiters = row->waiters.value_or(0) + queued - 1;
    row->number_details.emplace_back("queued", queued);
    // The others sleep in the queue, where its entries name them.
    for (const QueuedWaiter& q : FlockQueuedWaiters(head->bytes)) {
      const bool named = std::any_of(row->waiter_list.begin(), row->waiter_list.end(),
                                     [&q](const LockWaiter& w) { return w.pid == q.pid; });
      if (named) continue;
      LockWaiter w;
      w.pid = q.pid;
      w.command = ProcessCommandName(q.pid);
      w.mode = q.mode == QueuedFor::kExclusive ? "exclusive"
               : q.mode == QueuedFor::kShared  ? "shared"
                                               : "";
      row->waiter_list.push_back(std::move(w));
    }
  }
  FlockHolderRecord record;
  if (!ParseFlockHolderRecord(head->bytes, &record)) return;
  row->fence = static_cast<int64_t>(record.fence);
  row->text_details.emplace_back("held_mark", record.held ? "1" : "0");
  // The record carries no time. An exclusive holder writes it right after
  // locking, and nothing else writes the file while the lock is held; but a
  // holder that locks the same open file again writes it through a shared
  // mapping, and a write to a mapped page that is already dirty does not
  // update mtime (tmpfs and disk filesystems alike). So the mtime is a
  // lower bound: the lock was taken at or after it. Only when the record
  // is this holder's own (held mark set, same pid); a shared holder or a
  // program that ignores the record (PHP, flock(1)) says nothing.
  if (l.write && record.held && record.pid == l.pid) {
    row->since = head->mtime_seconds;
    row->since_source =
        "lock file mtime: taken at or after it (a holder that locks its file again "
        "writes the record through a mapping, which leaves mtime as it was)";
  }
}

}  // namespace

absl::StatusOr<FlockDsnTarget> ReadFlockDsn(const Dsn& dsn) {
  if (dsn.has_authority() && !dsn.host().empty()) {
    return BadDsn(dsn, "flock takes a dir as flock:///absolute/dir (three slashes)");
  }
  FlockDsnTarget target;
  target.dir = dsn.path();
  if (!target.dir.empty() && target.dir[0] != '/') {
    return BadDsn(dsn, "the lock dir must be an absolute path (flock:///dir)");
  }
  while (target.dir.size() > 1 && target.dir.back() == '/') target.dir.pop_back();
  target.path_naming = dsn.PeekOption("naming") == std::optional<std::string>("path");
  return target;
}

absl::StatusOr<HeldLocks> ListFlockLocks(Dsn& dsn, const ListRequest& request) {
  absl::StatusOr<FlockDsnTarget> target = ReadFlockDsn(dsn);
  if (!target.ok()) return target.status();
  if (target->path_naming && target->dir.empty()) {
    return BadDsn(dsn, "a flock store with naming=path and no dir has no lock dir to list");
  }
  const std::string dir = target->dir.empty() ? DefaultFlockDir() : target->dir;
  HeldLocks out;
  out.store = absl::StrCat("flock://", dir);

  // With a resource, only its file: Symfony's name for it, or the path
  // itself under naming=path.
  std::optional<std::string> only_file;
  if (request.resource) {
    if (!target->path_naming) {
      only_file = FlockFileName(*request.resource);
    } else {
      // A path in the dir, absolute or relative to it.
      absl::string_view r = *request.resource;
      absl::ConsumePrefix(&r, absl::StrCat(dir, "/"));
      only_file = std::string(r);
    }
  }
  absl::StatusOr<DirListing> listing = ListRegularFiles(
      dir, out.store, [&](absl::string_view name) {
        if (only_file) return name == *only_file;
        return target->path_naming || !ReadablePart(name).empty();
      });
  // A lock dir that does not exist yet holds no locks.
  if (absl::IsNotFound(listing.status())) return out;
  if (!listing.ok()) return listing.status();
  if (listing->files.empty()) return out;

  absl::StatusOr<std::vector<ProcFlockLock>> locks = ReadProcFlockLocks(out.store);
  if (!locks.ok()) return locks.status();
  const auto find = [&](const ProcFlockLock& l) -> const DirFile* {
    for (const DirFile& f : listing->files) {
      if (f.inode != l.inode) continue;
      if (listing->btrfs || (f.dev_major == l.major && f.dev_minor == l.minor)) return &f;
    }
    return nullptr;
  };
  // The "->" lines of a file, in the kernel's order (FIFO, but a release
  // wakes every waiter and whichever runs first may take the lock).
  std::map<const DirFile*, std::vector<LockWaiter>> waiters;
  for (const ProcFlockLock& l : *locks) {
    if (!l.waiting) continue;
    const DirFile* f = find(l);
    if (f == nullptr) continue;
    LockWaiter w;
    w.pid = l.pid;
    w.command = ProcessCommandName(l.pid);
    w.mode = l.write ? "exclusive" : "shared";
    waiters[f].push_back(std::move(w));
  }
  for (const ProcFlockLock& l : *locks) {
    if (l.waiting) continue;
    const DirFile* f = find(l);
    if (f == nullptr) continue;
    HeldLock row;
    row.object = f->name;
    row.resource = request.resource         ? *request.resource
                   : target->path_naming ? f->name
                                         : ReadablePart(f->name);
    row.mode = l.write ? "exclusive" : "shared";
    row.pid = l.pid;
    row.command = ProcessCommandName(l.pid);
    row.waiter_list = waiters[f];
    row.waiters = static_cast<int64_t>(row.waiter_list.size());
    AddHolderRecord(absl::StrCat(dir, "/", f->name), f->name,
                    !request.resource && !target->path_naming, l, out.store, &row);
    out.locks.push_back(std::move(row));
  }
  return out;
}

}  // namespace ipclock
