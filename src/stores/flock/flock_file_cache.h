// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A flock store's idle lock files: the files of Locks that were destroyed,
// kept open (with their mapped holder record) so that the next Lock on the
// same resource does no open, close, SHA-256 of the name, fstat or mmap.
//
// Each idle file is handed to exactly one key and back: never two at once.
// flock(2) locks belong to the open file description, so two Locks of one
// process sharing one would both "hold" the lock; with one file each they
// exclude each other as two processes do. A second Lock on a resource whose
// idle file is taken opens one of its own.
//
// Bounded (least recently used files are closed first), emptied by the
// first use after fork() (a child shares its parent's open file
// descriptions), and thread-safe.

#ifndef IPCLOCK_STORES_FLOCK_FILE_CACHE_H_
#define IPCLOCK_STORES_FLOCK_FILE_CACHE_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "stores/flock/flock_file.h"

namespace ipclock {

class FlockFileCache {
 public:
  // Keeps at most `capacity` idle files; 0 keeps none.
  explicit FlockFileCache(size_t capacity) : capacity_(capacity) {}
  FlockFileCache(const FlockFileCache&) = delete;
  FlockFileCache& operator=(const FlockFileCache&) = delete;
  ~FlockFileCache();

  // The idle file of `resource` in `dir` (the store's current dir, or null
  // in exact-path mode without a dir), or null. A file of another dir (the
  // store replaced a vanished dir) is closed, not returned.
  std::unique_ptr<FlockFile> Take(absl::string_view resource, const FlockDir* dir);

  // Keeps `file`, which must not hold a lock, and was opened by this
  // process. If `resource` already has an idle file, the older one is
  // closed.
  void Put(std::unique_ptr<FlockFile> file);

  // Closes every idle file (an open failed with EMFILE, or a dir was
  // replaced).
  void Clear();

  size_t size() const;

 private:
  // Under mu_: unlinks `f` from the LRU list (not from the map).
  void Unlink(FlockFile* f);
  // Files to close once mu_ is released (closing takes a system call, and
  // munmap another).
  using Closing = absl::InlinedVector<std::unique_ptr<FlockFile>, 2>;
  // Under mu_: moves every file to `out`.
  void TakeAll(Closing* out);
  // Under mu_: after fork(), the files are the parent's.
  void ForgetIfForked(Closing* out);

  const size_t capacity_;
  mutable std::mutex mu_;
  // Keys view the resource string of the file they map to.
  absl::flat_hash_map<absl::string_view, FlockFile*> files_;  // guarded by mu_
  FlockFile* newest_ = nullptr;                               // guarded by mu_
  FlockFile* oldest_ = nullptr;                               // guarded by mu_
  pid_t pid_ = 0;                                             // guarded by mu_
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_FLOCK_FILE_CACHE_H_
