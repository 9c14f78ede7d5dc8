// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/flock/flock_file_cache.h"

#include <utility>

#include "platform/process_id.h"

namespace ipclock {

FlockFileCache::~FlockFileCache() { Clear(); }

void FlockFileCache::Unlink(FlockFile* f) {
  if (f->newer != nullptr) {
    f->newer->older = f->older;
  } else {
    newest_ = f->older;
  }
  if (f->older != nullptr) {
    f->older->newer = f->newer;
  } else {
    oldest_ = f->newer;
  }
  f->newer = f->older = nullptr;
}

void FlockFileCache::TakeAll(Closing* out) {
  for (FlockFile* f = newest_; f != nullptr;) {
    FlockFile* next = f->older;
    f->newer = f->older = nullptr;
    out->emplace_back(f);
    f = next;
  }
  files_.clear();
  newest_ = oldest_ = nullptr;
}

void FlockFileCache::ForgetIfForked(Closing* out) {
  const pid_t me = CurrentPid();
  if (pid_ == me) return;
  // The files (and their descriptors) of the parent: closing the child's
  // copies leaves the parent's alone.
  TakeAll(out);
  pid_ = me;
}

std::unique_ptr<FlockFile> FlockFileCache::Take(absl::string_view resource,
                                                const FlockDir* dir) {
  Closing closing;  // closed after unlocking
  std::unique_ptr<FlockFile> found;
  {
    std::lock_guard<std::mutex> guard(mu_);
    ForgetIfForked(&closing);
    auto it = files_.find(resource);
    if (it == files_.end()) return nullptr;
    FlockFile* f = it->second;
    files_.erase(it);
    Unlink(f);
    if (f->dir.get() == dir) {
      found.reset(f);
    } else {
      closing.emplace_back(f);
    }
  }
  return found;
}

void FlockFileCache::Put(std::unique_ptr<FlockFile> file) {
  Closing closing;
  std::lock_guard<std::mutex> guard(mu_);
  ForgetIfForked(&closing);
  if (capacity_ == 0 || file->pid != pid_) return;  // closed on return
  while (files_.size() >= capacity_ && oldest_ != nullptr) {
    FlockFile* victim = oldest_;
    files_.erase(absl::string_view(victim->resource));
    Unlink(victim);
    closing.emplace_back(victim);
  }
  FlockFile* f = file.release();
  auto inserted = files_.try_emplace(absl::string_view(f->resource), f);
  if (!inserted.second) {
    // Two Locks on the resource were destroyed: keep the newer file (the
    // map's key views the older one's name, so it is keyed anew).
    FlockFile* older = inserted.first->second;
    files_.erase(inserted.first);
    Unlink(older);
    closing.emplace_back(older);
    files_.emplace(absl::string_view(f->resource), f);
  }
  f->older = newest_;
  f->newer = nullptr;
  (newest_ != nullptr ? newest_->newer : oldest_) = f;
  newest_ = f;
}

void FlockFileCache::Clear() {
  Closing closing;
  std::lock_guard<std::mutex> guard(mu_);
  TakeAll(&closing);
}

size_t FlockFileCache::size() const {
  std::lock_guard<std::mutex> guard(mu_);
  return files_.size();
}

}  // namespace ipclock
