// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shm store's segment: opening or creating /dev/shm/ipclock.NAME,
// initializing it, checking its header, mapping it, and telling whether it
// is still the object at that path.
//
// Creation race. Whoever finds the segment uninitialized (magic 0)
// initializes it under an exclusive flock(2) on the segment, publishing the
// magic last. flock rather than "the creator initializes": a creator killed
// between O_EXCL and the publication would otherwise leave a segment nobody
// may touch, while its flock goes with it. A process that created the
// segment and fails to initialize it removes it again; one that opened a
// segment someone else made never removes it.
//
// Identity. A segment that is removed (rm, shm_unlink, systemd-logind's
// RemoveIPC at logout) stays mapped in every process that has it, while the
// next process to open the name creates a new one: the two exclude nothing
// of each other. CheckIdentity() tells: the path must still name the object
// this segment has open (same device and inode, one stat(2)). What it finds
// is kept: once lost, always lost.

#ifndef IPCLOCK_STORES_SHM_SEGMENT_H_
#define IPCLOCK_STORES_SHM_SEGMENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/stores/shm_store.h"
#include "platform/scoped_fd.h"
#include "platform/shm_mapping.h"
#include "stores/shm/shm_mutex_store.h"

namespace ipclock {

// The names of segment NAME.
struct ShmNames {
  explicit ShmNames(absl::string_view name);

  std::string name;      // NAME
  std::string describe;  // shm://NAME, for messages
  std::string path;      // /dev/shm/ipclock.NAME
  std::string shm_name;  // /ipclock.NAME, for shm_open
};

// True for 1 to 200 bytes of [A-Za-z0-9._-].
bool ValidShmSegmentName(absl::string_view name);
absl::Status BadShmSegmentName(absl::string_view name);

// The header fields a process uses, each read once out of shared memory.
// Checked with ValidateShmHeader(), then used instead of the header.
struct ShmHeaderCopy {
  uint32_t version = 0;
  uint32_t word_size = 0;
  uint32_t header_size = 0;
  uint32_t slot_size = 0;
  uint32_t mutex_size = 0;
  uint32_t capacity = 0;
  uint32_t flags = 0;

  bool pi() const { return (flags & kShmFlagPriorityInheritance) != 0; }
};

ShmHeaderCopy CopyShmHeader(const ShmHeader& header);

// Checks `copy` against this build's layout and the size of the object
// (FailedPrecondition, naming the field), and against `pi` if given.
absl::Status ValidateShmHeader(const ShmHeaderCopy& copy, uint64_t file_size,
                               std::optional<bool> pi, const ShmNames& names);

// Reads the header of the object open as `fd` once it is initialized:
// NotFound-like errors from the calls, FailedPrecondition for an object
// that is not (yet) an ipclock segment or is too small. `identity` gets the
// object's fstat.
absl::StatusOr<ShmHeaderCopy> ReadShmHeader(int fd, const ShmNames& names,
                                            ObjectStat* identity);

// The magic of the object open as `fd` (of `size` bytes): 0 while it is
// not initialized, kShmMagic once it is.
absl::StatusOr<uint64_t> PublishedShmMagic(int fd, uint64_t size,
                                           const ShmNames& names);

class ShmSegment {
 public:
  // How the segment's path relates to the segment this process mapped.
  enum class Loss : int {
    kNone = 0,
    kRemoved,   // unlinked, nothing at the path
    kReplaced,  // unlinked, and another segment made at the path
    kMoved,     // still linked, but not (only) at the path: renamed
  };

  // Opens or creates the segment of `options` (already checked).
  static absl::StatusOr<std::shared_ptr<ShmSegment>> Open(const ShmStoreOptions& options);

  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  const ShmNames& names() const { return names_; }
  const std::string& describe() const { return names_.describe; }
  const std::string& path() const { return names_.path; }
  int fd() const { return fd_.get(); }
  uint32_t capacity() const { return capacity_; }
  bool pi() const { return pi_; }

  ShmHeader& header() const { return *header_; }
  std::atomic<uint64_t>& entry(uint32_t position) const { return index_[position]; }
  ShmSlot& slot(uint32_t i) const { return slots_[i]; }

  // What the checks so far found.
  Loss loss() const { return static_cast<Loss>(loss_.load(std::memory_order_relaxed)); }
  // Looks now: one stat(2) of the path, and an fstat(2) once it differs.
  // The OS error if the path cannot be examined (not a loss).
  absl::StatusOr<Loss> CheckIdentity(absl::string_view resource);
  // CheckIdentity() if none ran within the last tick of the coarse clock
  // (first acquisitions), or within the current second of the wall clock
  // (releases); loss() otherwise.
  absl::StatusOr<Loss> CheckIdentityEachTick(absl::string_view resource);
  absl::StatusOr<Loss> CheckIdentityEachSecond(absl::string_view resource);
  // True when no check found a loss and one ran this second: what
  // CheckIdentityEachSecond() would say without looking. A release asks
  // this first, for the price of a vDSO time(2).
  bool IntactThisSecond() const {
    return loss_.load(std::memory_order_relaxed) == 0 &&
           WallClockSeconds() == last_second_.load(std::memory_order_relaxed);
  }

  // "segment /dev/shm/ipclock.NAME was removed (...)": what a loss means.
  std::string DescribeLoss(Loss loss) const;

 private:
  ShmSegment(const ShmNames& names, ScopedFd fd, ObjectStat identity,
             SharedMapping mapping, const ShmHeaderCopy& header);

  const ShmNames names_;
  // Kept open: its identity is what the path must still name, and the
  // watch on held locks puts its inotify watch on it.
  const ScopedFd fd_;
  const ObjectStat identity_;
  const SharedMapping mapping_;
  ShmHeader* const header_;
  std::atomic<uint64_t>* const index_;
  ShmSlot* const slots_;
  const uint32_t capacity_;
  const bool pi_;
  std::atomic<int> loss_{0};
  std::atomic<int64_t> next_tick_check_{0};
  std::atomic<int64_t> last_second_{0};
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SHM_SEGMENT_H_
