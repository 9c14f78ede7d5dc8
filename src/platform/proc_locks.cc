// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/proc_locks.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/errors.h"
#include "platform/small_file.h"

namespace ipclock {

namespace {
// /proc/locks lists every lock on the host; allow for a busy one.
constexpr size_t kMaxProcLocksBytes = 64 << 20;

// One line's fields, if it is a lock of `kind` ("FLOCK", "POSIX").
bool ParseLine(absl::string_view line, absl::string_view kind, ProcRecordLock* l) {
  std::vector<absl::string_view> f =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  size_t i = 1;  // past "N:"
  if (i < f.size() && f[i] == "->") {
    l->waiting = true;
    ++i;
  }
  if (f.size() < i + 7 || f[i] != kind) return false;
  l->write = f[i + 2] == "WRITE";
  int pid = 0;
  if (!absl::SimpleAtoi(f[i + 3], &pid)) return false;
  l->pid = pid;
  std::vector<absl::string_view> dev = absl::StrSplit(f[i + 4], ':');
  if (dev.size() != 3 || !absl::SimpleHexAtoi(dev[0], &l->major) ||
      !absl::SimpleHexAtoi(dev[1], &l->minor) || !absl::SimpleAtoi(dev[2], &l->inode) ||
      !absl::SimpleAtoi(f[i + 5], &l->start)) {
    return false;
  }
  if (f[i + 6] == "EOF") {
    l->last = UINT64_MAX;
  } else if (!absl::SimpleAtoi(f[i + 6], &l->last)) {
    return false;
  }
  return true;
}

absl::StatusOr<std::string> ReadProcLocks(absl::string_view who) {
  absl::StatusOr<std::string> text = ReadRegularFile("/proc/locks", kMaxProcLocksBytes, who);
  if (!text.ok()) {
    return StoreError(absl::StatusCode::kUnavailable, who, "",
                      absl::StrCat("cannot read /proc/locks (is /proc mounted?): ",
                                   text.status().message()));
  }
  return text;
}

}  // namespace

std::vector<ProcFlockLock> ParseProcFlockLocks(absl::string_view text) {
  std::vector<ProcFlockLock> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ProcRecordLock l;
    if (ParseLine(line, "FLOCK", &l)) out.push_back(l);  // without the range
  }
  return out;
}

absl::StatusOr<std::vector<ProcFlockLock>> ReadProcFlockLocks(absl::string_view who) {
  absl::StatusOr<std::string> text = ReadProcLocks(who);
  if (!text.ok()) return text.status();
  return ParseProcFlockLocks(*text);
}

std::vector<ProcRecordLock> ParseProcRecordLocks(absl::string_view text) {
  std::vector<ProcRecordLock> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ProcRecordLock l;
    if (ParseLine(line, "POSIX", &l) && !l.waiting) out.push_back(l);
  }
  return out;
}

absl::StatusOr<std::vector<ProcRecordLock>> ReadProcRecordLocks(absl::string_view who) {
  absl::StatusOr<std::string> text = ReadProcLocks(who);
  if (!text.ok()) return text.status();
  return ParseProcRecordLocks(*text);
}

}  // namespace ipclock
