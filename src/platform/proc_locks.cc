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
}  // namespace

std::vector<ProcFlockLock> ParseProcFlockLocks(absl::string_view text) {
  std::vector<ProcFlockLock> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    ProcFlockLock l;
    size_t i = 1;  // past "N:"
    if (i < f.size() && f[i] == "->") {
      l.waiting = true;
      ++i;
    }
    if (f.size() < i + 5 || f[i] != "FLOCK") continue;
    l.write = f[i + 2] == "WRITE";
    int pid = 0;
    if (!absl::SimpleAtoi(f[i + 3], &pid)) continue;
    l.pid = pid;
    std::vector<absl::string_view> dev = absl::StrSplit(f[i + 4], ':');
    if (dev.size() != 3 || !absl::SimpleHexAtoi(dev[0], &l.major) ||
        !absl::SimpleHexAtoi(dev[1], &l.minor) || !absl::SimpleAtoi(dev[2], &l.inode)) {
      continue;
    }
    out.push_back(l);
  }
  return out;
}

absl::StatusOr<std::vector<ProcFlockLock>> ReadProcFlockLocks(absl::string_view who) {
  absl::StatusOr<std::string> text =
      ReadRegularFile("/proc/locks", kMaxProcLocksBytes, who);
  if (!text.ok()) {
    return StoreError(absl::StatusCode::kUnavailable, who, "",
                      absl::StrCat("cannot read /proc/locks (is /proc mounted?): ",
                                   text.status().message()));
  }
  return ParseProcFlockLocks(*text);
}

}  // namespace ipclock
