// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "workspace.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ipclock/stores/shm_store.h"

namespace ipclock_bench {

namespace {

// Unlinks the entries of `dir` whose names contain `needle`.
void RemoveMatching(const std::string& dir, const std::string& needle) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    if (absl::StrContains(e->d_name, needle)) {
      unlink(absl::StrCat(dir, "/", e->d_name).c_str());
    }
  }
  closedir(d);
}

}  // namespace

bool Workspace::Create() {
  tag = absl::StrCat("ipclock-bench.", getpid());
  // tmpfs: the figures are the lock's, not a disk's (/tmp is ext4 on many
  // machines, where a holder record write costs a journal update).
  dir = absl::StrCat("/dev/shm/", tag);
  shm_dsn = absl::StrCat("shm://", tag);
  fair_shm_dsn = absl::StrCat("shm://", tag, ".fair?fair=true");
  big_shm_dsn = absl::StrCat("shm://", tag, ".big?capacity=", kBigShmCapacity);
  flock_dsn = absl::StrCat("flock://", dir);
  posix_dsn = absl::StrCat("posix-semaphore?prefix=", tag);
  return mkdir(dir.c_str(), 0700) == 0;
}

void Workspace::Remove() {
  RemoveMatching(dir, "");
  rmdir(dir.c_str());
  ipclock::RemoveShmSegment(tag).IgnoreError();
  ipclock::RemoveShmSegment(absl::StrCat(tag, ".big")).IgnoreError();
  ipclock::RemoveShmSegment(absl::StrCat(tag, ".fair")).IgnoreError();
  RemoveMatching("/dev/shm", tag);  // POSIX semaphores and their registries
}

}  // namespace ipclock_bench
