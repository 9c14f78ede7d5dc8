// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The lock dir of a flock store and the lock files it opens: opening them as
// Symfony's FlockStore and flock(1) do, telling whether each is still the
// one at its path, and the holder record's I/O.

#ifndef IPCLOCK_STORES_FLOCK_FILE_H_
#define IPCLOCK_STORES_FLOCK_FILE_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/store_interface.h"
#include "platform/scoped_fd.h"
#include "platform/shared_page.h"
#include "stores/flock/flock_record.h"
#include "stores/ticket_queue/ticket_queue.h"

namespace ipclock {

// Where a dir or file we hold open is now, compared with its path.
enum class Whereabouts {
  kInPlace,  // still the one at its path
  kRemoved,  // deleted: no name links to it any more
  kMoved,    // still linked, but its path now names another one or nothing
             // (renamed, replaced, or a dir above it renamed)
};

// The lock dir a store opened. Files opened in it keep it (and its
// descriptor) alive, so that a dir that was replaced stays open until the
// last lock file in it is closed.
class FlockDir {
 public:
  // OpenLockDir(), plus what the store needs to know of the dir.
  static absl::StatusOr<std::shared_ptr<FlockDir>> Open(const std::string& path,
                                                         mode_t create_mode,
                                                         bool map_records,
                                                         absl::string_view store);

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  // Whether lock files in this dir may be mapped (SharedFilePage): only on
  // local filesystems whose page cache is the file (tmpfs, ext4, xfs,
  // btrfs, f2fs), where a mapping and pread/pwrite of another process see
  // the same bytes. Holder records are mapped only if the store also asked
  // for it (`map_record`); the waiters' queue of `fair` always is.
  bool pages_shared() const { return pages_shared_; }
  bool records_mappable() const { return map_records_ && pages_shared_; }

  // stat(2) of the dir's path from "/" and fstat(2) of the dir: 0 and
  // `*where`, or the errno of a stat that failed for another reason than
  // the path being gone.
  [[nodiscard]] int Locate(Whereabouts* where) const;

  // Whether the dir's path still leads to it: a stat(2) of the path. It
  // sees what inotify on the dir cannot, a dir above it renamed or
  // replaced. One per dir, shared by the watch among its locks.
  const std::shared_ptr<WatchProbe>& probe() const { return probe_; }

  // The dirs above this one (not "/"), open (O_PATH), from the top, when
  // the path is absolute, none of them is a symbolic link, each may be
  // read (as inotify needs), and they led to this dir once all were open;
  // else empty. While inotify watches them, a dir above renamed is heard
  // of at once, and the probe is not needed: none of them can be replaced
  // without being renamed (they are not empty), and a mount over one
  // changes the mount table.
  const std::vector<ScopedFd>& ancestors() const { return ancestors_; }

  // Monotonic time of the last check that found the dir in place.
  std::atomic<int64_t> checked_ns{0};
  // Exclusive or shared locks of the store held in this dir now.
  std::atomic<int> held{0};
  // Set once the store opened a new dir at the path: nothing more is locked
  // in this one.
  std::atomic<bool> retired{false};

 private:
  FlockDir(std::string path, ScopedFd fd, const struct stat& st, bool map_records,
           bool pages_shared);

  const std::string path_;
  const ScopedFd fd_;
  const dev_t dev_;
  const ino_t ino_;
  const bool map_records_;
  const bool pages_shared_;
  const std::shared_ptr<WatchProbe> probe_;
  std::vector<ScopedFd> ancestors_;  // set by Open() only
};

// A WatchProbe that a path no longer leads to the file or dir it named
// when made (device `dev`, inode `ino`): one stat(2), following links
// above the last component only. It keeps no reference to anything.
std::shared_ptr<WatchProbe> MakePathProbe(std::string path, dev_t dev, ino_t ino);

// One open lock file, owned by one key (one Lock) or idle in the store's
// cache: never two at once, so that two Locks never share an open file
// description (flock locks belong to it, not to the process).
struct FlockFile {
  std::shared_ptr<FlockDir> dir;  // null: `name` is a path of its own
  std::string resource;           // the cache's key
  std::string name;               // in `dir`, or a path
  ScopedFd fd;
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t type = 0;  // S_IFREG or S_IFDIR
  bool writable = false;
  pid_t pid = 0;  // the process that opened it (fork() copies descriptors)
  // Monotonic time at which `name` last resolved to this file.
  int64_t checked_ns = 0;
  uint32_t acquisitions = 0;
  // The highest fence this descriptor saw or wrote: a record found lower
  // (cut off by a truncation, overwritten by another tool) never takes the
  // fence back from here.
  uint64_t last_fence = 0;
  // The file is known to hold a whole record, so its first page exists.
  bool record_complete = false;
  // The record as this descriptor last read or wrote it, and its fields:
  // a record that has not changed since (no other process acquired) is
  // neither parsed nor formatted again.
  char known[kFlockRecordSize];
  FlockRecordFields known_fields;
  bool known_valid = false;
  bool map_refused = false;
  std::unique_ptr<SharedFilePage> page;
  // The page again, for the waiters' queue of a `fair` store (MapQueue).
  std::unique_ptr<SharedFilePage> queue_page;
  // The cache's LRU list, while idle.
  FlockFile* newer = nullptr;
  FlockFile* older = nullptr;

  int dirfd() const;
  // The file's path for messages (and for stat in exact-path mode).
  std::string Path() const;
  // Where the file is: fstatat of its name in its dir (or of its path),
  // and fstat of the descriptor to tell deleted from moved. 0 and `*where`
  // (and `*size`, the size of the file at the path when in place), or the
  // errno of a stat that failed otherwise.
  [[nodiscard]] int Locate(Whereabouts* where, off_t* size) const;

  // The holder record, through the mapped page when there is one, else with
  // pread. 0 and `*valid` (false for a file without a whole record), or the
  // errno of a failed read.
  [[nodiscard]] int ReadRecord(FlockRecordFields* out, bool* valid);
  // Writes a whole record, through the page or with pwrite. 0 or the errno.
  [[nodiscard]] int WriteRecord(const FlockRecordFields& fields);
  // Maps the first page for the next acquisitions, where allowed; failures
  // only leave it unmapped.
  void MapRecordIfUseful();

  // The waiters' queue of a `fair` store (stores/ticket_queue/ticket_queue.h), at
  // kFlockQueueOffset in the file's first page: the file is made long
  // enough to hold it (so that its bytes are the file's, not a tail past
  // its end), then mapped, once per open file and again after a truncation
  // took the page away. 0, or EACCES for a file open read-only, ENOTSUP in
  // a dir whose pages are not shared, or the errno of ftruncate or mmap.
  [[nodiscard]] int MapQueue(TicketQueueShared** out);
};

// Where the waiters' queue lies in a lock file: after the holder record,
// with room to spare, on a cache line of its own.
inline constexpr size_t kFlockQueueOffset = 256;

// How a lock file is opened, and what it is.
struct FlockOpenRequest {
  std::shared_ptr<FlockDir> dir;  // null: `name` is resolved from the cwd
  std::string resource;
  std::string name;
  mode_t file_mode = 0600;
  bool symfony = true;  // Symfony's FlockStore's opening, else flock(1)'s
  // Symfony naming with records: a file created here gets the resource's
  // name after its record (flock_record.h).
  bool write_name = false;
};

// Opens a lock file:
//   * Symfony naming: read-write, else read-only, else created with
//     O_EXCL and chmod'ed to `file_mode` (Symfony's order), a regular file.
//   * Exact paths: read-only, created if missing (0666 less the umask, as
//     flock(1) does), or a directory.
// Always O_NOFOLLOW (a symbolic link is PermissionDenied) and O_NONBLOCK
// (opening a FIFO planted at the path must not hang), and checked with
// fstat(2) before anything else: a file of another type is
// FailedPrecondition and is never locked. On failure `*failure` says more.
struct FlockOpenFailure {
  int err = 0;               // the errno of the call that failed, if one did
  bool dir_missing = false;  // the file could not be created: its dir is gone
};
absl::StatusOr<std::unique_ptr<FlockFile>> OpenFlockFile(const FlockOpenRequest& request,
                                                         absl::string_view store,
                                                         FlockOpenFailure* failure);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_FLOCK_FILE_H_
