// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/flock/flock_file.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/store_errors.h"
#include "ipclock/spi/deadline.h"
#include "platform/errors.h"
#include "platform/files.h"
#include "platform/lock_dir.h"
#include "platform/process_id.h"
#include "stores/flock/flock_store.h"

namespace ipclock {

namespace {

bool Identifies(const struct stat& st, dev_t dev, ino_t ino) {
  return st.st_dev == dev && st.st_ino == ino;
}

// A file that keeps being created and deleted under us (a cleaner racing
// every open) is an error after this many tries rather than a livelock.
constexpr int kMaxCreateRaces = 64;

// Filesystems on which a MAP_SHARED page and pread/pwrite of other
// processes are the same bytes: the page cache is the file. Not network or
// FUSE filesystems, whose caches other hosts or a daemon may bypass.
bool MappableFilesystem(int dirfd) {
  struct statfs fs;
  if (StatFsFd(dirfd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case TMPFS_MAGIC:
    case EXT4_SUPER_MAGIC:  // also ext2 and ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

// Where something we hold open is, given a stat of its path (`path_err`,
// `at_path`) and its own identity.
int Classify(int path_err, const struct stat& at_path, dev_t dev, ino_t ino, int fd,
             Whereabouts* where) {
  if (path_err == 0 && Identifies(at_path, dev, ino)) {
    *where = Whereabouts::kInPlace;
    return 0;
  }
  // ENOENT: nothing at the path; ENOTDIR: a dir on the way is now a file.
  if (path_err != 0 && path_err != ENOENT && path_err != ENOTDIR) return path_err;
  struct stat self;
  if (int err = StatFd(fd, &self); err != 0) return err;
  *where = self.st_nlink == 0 ? Whereabouts::kRemoved : Whereabouts::kMoved;
  return 0;
}

// FlockDir::ancestors(): each dir opened from the one above it, without
// following links, and the last one's entry checked to be the lock dir.
std::vector<ScopedFd> OpenAncestors(const std::string& path, dev_t dev, ino_t ino) {
  std::vector<absl::string_view> parts;
  if (path.empty() || path[0] != '/') return {};
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == "." || part == "..") return {};
    parts.push_back(part);
  }
  if (parts.empty()) return {};
  std::vector<ScopedFd> above;
  ScopedFd root;
  if (OpenFileAt(AT_FDCWD, "/", O_PATH | O_DIRECTORY, 0, &root) != 0) return {};
  int at = root.get();
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string name(parts[i]);
    if (i + 1 < parts.size() && AccessAt(at, name.c_str(), R_OK) != 0) return {};
    ScopedFd next;
    if (OpenFileAt(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW, 0, &next) != 0) return {};
    if (i + 1 == parts.size()) {
      struct stat st;
      if (StatFd(next.get(), &st) != 0 || !Identifies(st, dev, ino)) return {};
      return above;
    }
    above.push_back(std::move(next));
    at = above.back().get();
  }
  return {};
}

class PathProbe final : public WatchProbe {
 public:
  PathProbe(std::string path, dev_t dev, ino_t ino)
      : path_(std::move(path)), dev_(dev), ino_(ino) {}
  bool Changed() override {
    struct stat at_path;
    return StatAt(AT_FDCWD, path_.c_str(), AT_SYMLINK_NOFOLLOW, &at_path) != 0 ||
           !Identifies(at_path, dev_, ino_);
  }

 private:
  const std::string path_;
  const dev_t dev_;
  const ino_t ino_;
};

}  // namespace

std::shared_ptr<WatchProbe> MakePathProbe(std::string path, dev_t dev, ino_t ino) {
  return std::make_shared<PathProbe>(std::move(path), dev, ino);
}

FlockDir::FlockDir(std::string path, ScopedFd fd, const struct stat& st, bool map_records,
                   bool pages_shared)
    : path_(std::move(path)),
      fd_(std::move(fd)),
      dev_(st.st_dev),
      ino_(st.st_ino),
      map_records_(map_records),
      pages_shared_(pages_shared),
      probe_(MakePathProbe(path_, st.st_dev, st.st_ino)) {}

absl::StatusOr<std::shared_ptr<FlockDir>> FlockDir::Open(const std::string& path,
                                                         mode_t create_mode,
                                                         bool map_records,
                                                         absl::string_view store) {
  absl::StatusOr<ScopedFd> fd = OpenLockDir(path, create_mode, store);
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (int err = StatFd(fd->get(), &st); err != 0) {
    return ErrnoError(err, store, "", absl::StrCat("fstat lock dir ", path));
  }
  const bool pages_shared = MappableFilesystem(fd->get());
  std::shared_ptr<FlockDir> dir(
      new FlockDir(path, *std::move(fd), st, map_records, pages_shared));
  dir->ancestors_ = OpenAncestors(path, st.st_dev, st.st_ino);
  dir->checked_ns.store(Deadline::NowNanos(), std::memory_order_relaxed);
  return dir;
}

int FlockDir::Locate(Whereabouts* where) const {
  struct stat at_path;
  // The dir itself must not be a symbolic link (OpenLockDir refuses one);
  // links above it are followed, as the next open of the path would.
  int err = StatAt(AT_FDCWD, path_.c_str(), AT_SYMLINK_NOFOLLOW, &at_path);
  return Classify(err, at_path, dev_, ino_, fd_.get(), where);
}

int FlockFile::dirfd() const { return dir ? dir->fd() : AT_FDCWD; }

std::string FlockFile::Path() const {
  if (!dir || (!name.empty() && name[0] == '/')) return name;
  return absl::StrCat(dir->path(), "/", name);
}

int FlockFile::Locate(Whereabouts* where, off_t* size) const {
  struct stat at_path;
  int err = StatAt(dirfd(), name.c_str(), AT_SYMLINK_NOFOLLOW, &at_path);
  *size = err == 0 ? at_path.st_size : 0;
  return Classify(err, at_path, dev, ino, fd.get(), where);
}

int FlockFile::ReadRecord(FlockRecordFields* out, bool* valid) {
  char buf[kFlockRecordSize];
  bool read = false;
  if (page != nullptr) {
    read = page->Read(0, buf, sizeof(buf));
    if (!read) {
      // Cut off the file by a truncation: read it as it is now.
      page.reset();
      record_complete = false;
    }
  }
  if (!read) {
    size_t got = 0;
    if (int err = ReadAt(fd.get(), buf, sizeof(buf), 0, &got); err != 0) return err;
    record_complete = got == sizeof(buf);
    if (!record_complete) {
      known_valid = false;
      *valid = false;
      return 0;
    }
  }
  // Parsed from this one copy only, whatever is written meanwhile.
  if (known_valid && memcmp(buf, known, sizeof(buf)) == 0) {
    *out = known_fields;
    *valid = true;
    return 0;
  }
  *valid = ParseFlockRecord(buf, out);
  known_valid = *valid;
  if (*valid) {
    memcpy(known, buf, sizeof(buf));
    known_fields = *out;
  }
  return 0;
}

int FlockFile::WriteRecord(const FlockRecordFields& fields) {
  // Made in `known`, which becomes what the file holds once written.
  if (known_valid) {
    UpdateFlockRecord(known, known_fields, fields);
  } else {
    FormatFlockRecord(fields, known);
  }
  known_fields = fields;
  known_valid = true;
  if (page != nullptr) {
    if (page->Write(0, known, sizeof(known))) return 0;
    page.reset();
    record_complete = false;
  }
  if (int err = WriteAllAt(fd.get(), known, sizeof(known), 0); err != 0) {
    known_valid = false;  // what the file holds now is unknown
    return err;
  }
  record_complete = true;
  return 0;
}

void FlockFile::MapRecordIfUseful() {
  if (page != nullptr || map_refused || !writable || !record_complete || !dir ||
      !dir->records_mappable()) {
    return;
  }
  // Any failure (the program's own SIGBUS handler, no address space, an
  // injected fault) only means pread and pwrite, for this descriptor.
  if (SharedFilePage::Map(fd.get(), &page) != 0) map_refused = true;
}

size_t FlockQueueHeadSize() { return kFlockQueueOffset + 2 * sizeof(uint32_t); }

int64_t FlockQueueLength(absl::string_view head) {
  if (head.size() < FlockQueueHeadSize()) return 0;
  // TicketQueueShared's first two words, `next` and `first`.
  uint32_t words[2];
  memcpy(words, head.data() + kFlockQueueOffset, sizeof(words));
  const uint32_t queued = words[0] - words[1];
  return queued <= kTicketQueueEntries * 1024u ? queued : 0;
}

size_t FlockQueueSize() { return kFlockQueueOffset + sizeof(TicketQueueShared); }

std::vector<QueuedWaiter> FlockQueuedWaiters(absl::string_view head) {
  if (head.size() < FlockQueueSize()) return {};
  return QueuedWaiters(head.substr(kFlockQueueOffset));
}

int FlockFile::MapQueue(TicketQueueShared** out) {
  static_assert(kFlockQueueOffset >= kFlockRecordSize && kFlockQueueOffset % 64 == 0,
                "the queue lies after the record, on its own cache line");
  constexpr size_t kEnd = kFlockQueueOffset + sizeof(TicketQueueShared);
  // Cut off the file by a truncation: the queue in it is gone (waiters are
  // sent to the lock; ticket_queue.h), and the file as it is now is mapped.
  if (queue_page != nullptr && queue_page->lost()) queue_page.reset();
  if (queue_page == nullptr) {
    if (!writable) return EACCES;
    if (!dir || !dir->pages_shared()) return ENOTSUP;
    if (kEnd > SharedFilePage::Size()) return ENOTSUP;
    if (int err = GrowFileTo(fd.get(), static_cast<off_t>(kEnd)); err != 0) return err;
    if (int err = SharedFilePage::Map(fd.get(), &queue_page); err != 0) return err;
  }
  *out = reinterpret_cast<TicketQueueShared*>(static_cast<char*>(queue_page->data()) +
                                             kFlockQueueOffset);
  return 0;
}

absl::StatusOr<std::unique_ptr<FlockFile>> OpenFlockFile(const FlockOpenRequest& r,
                                                         absl::string_view store,
                                                         FlockOpenFailure* failure) {
  *failure = FlockOpenFailure();
  auto f = std::make_unique<FlockFile>();
  f->dir = r.dir;
  f->resource = r.resource;
  f->name = r.name;
  f->pid = CurrentPid();
  const std::string path = f->Path();
  auto open_error = [&](int err, absl::string_view what) {
    failure->err = err;
    // A file of the wrong type is a configuration fault (ipclock/errors.h),
    // as a FIFO is below.
    if (err == ELOOP) {
      return ConfigurationError(store, r.resource,
                                absl::StrCat("refusing ", path,
                                             ": it is a symbolic link (lock files are "
                                             "opened with O_NOFOLLOW)"));
    }
    return ErrnoError(err, store, r.resource, absl::StrCat(what, " ", path));
  };
  // Taken before the open: the name resolved to this file no earlier.
  const int64_t opened_at = Deadline::NowNanos();
  const int dirfd = f->dirfd();
  const char* name = r.name.c_str();
  const int base = O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
  if (r.symfony) {
    // Symfony's FlockStore opens r+, then r, then creates with 'x' and
    // chmods to 0666: the same order, so that a file either side creates
    // works for the other, with our own mode.
    for (int attempt = 0;; ++attempt) {
      int err = OpenFileAt(dirfd, name, O_RDWR | base, 0, &f->fd);
      if (err == 0) {
        f->writable = true;
        break;
      }
      if (err == EACCES) {
        err = OpenFileAt(dirfd, name, O_RDONLY | base, 0, &f->fd);
        if (err != 0) return open_error(err, "open");
        break;
      }
      if (err != ENOENT) return open_error(err, "open");
      err = OpenFileAt(dirfd, name, O_RDWR | O_CREAT | O_EXCL | base, r.file_mode, &f->fd);
      if (err == 0) {
        // O_CREAT's mode is cut by the umask; the configured mode is a
        // promise to other users (0666 for a PHP peer), so set it exactly.
        if (int e = ChmodFd(f->fd.get(), r.file_mode); e != 0) {
          return open_error(e, absl::StrFormat("set mode %04o of", r.file_mode));
        }
        f->writable = true;
        if (const std::string block = r.write_name ? FormatFlockName(r.resource) : "";
            !block.empty()) {
          // Only for `ipclock list`: a file without it still locks.
          (void)WriteAllAt(f->fd.get(), block.data(), block.size(), kFlockNameOffset);
        }
        break;
      }
      if (err == EEXIST && attempt < kMaxCreateRaces) continue;  // created just now
      if (err == ENOENT) failure->dir_missing = true;
      return open_error(err, "create");
    }
  } else {
    // As util-linux flock(1): read-only, created if missing (0666 less the
    // umask), a directory if that is what the path names. Unlike flock(1) a
    // symbolic link is refused: a planted link could point anywhere.
    int err = OpenFileAt(dirfd, name, O_RDONLY | O_CREAT | base, 0666, &f->fd);
    if (err == EISDIR) {
      err = OpenFileAt(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &f->fd);
    }
    if (err != 0) return open_error(err, "open");
  }
  struct stat st;
  if (int err = StatFd(f->fd.get(), &st); err != 0) return open_error(err, "fstat");
  if (!S_ISREG(st.st_mode) && !(S_ISDIR(st.st_mode) && !r.symfony)) {
    return ConfigurationError(store, r.resource,
                              absl::StrCat("refusing ", path, ": it is a ",
                                           FileTypeName(st.st_mode),
                                           r.symfony ? ", not a regular file"
                                                     : ", not a regular file or a directory",
                                           "; nothing was locked"));
  }
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  f->type = st.st_mode & S_IFMT;
  f->checked_ns = opened_at;
  return f;
}

}  // namespace ipclock
