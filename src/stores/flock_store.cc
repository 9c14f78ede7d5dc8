// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// FlockStore. See include/ipclock/flock_store.h for the contract; the
// caveats of flock(2) are written beside the code that deals with them.

#include "stores/flock_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "platform/errors.h"
#include "ipclock/store_interface.h"
#include "core/removeipc_guard.h"
#include "platform/lock_dir.h"
#include "platform/process_id.h"
#include "platform/scoped_fd.h"
#include "platform/timed_flock.h"
#include "stores/flock_naming.h"
#include "stores/flock_inspect.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "flock";

// The holder record: 64 bytes at offset 0 of a Symfony-named lock file,
//   "ipclock-flock/1 fence=<20 digits> held=<0|1> pid=<9 digits>\n"
// written under the exclusive lock. Text, so that `cat` explains a lock file.
constexpr size_t kRecordSize = 64;
constexpr absl::string_view kRecordMagic = "ipclock-flock/1 fence=";
constexpr size_t kFenceOffset = 22;
constexpr size_t kFenceDigits = 20;
constexpr size_t kHeldOffset = 48;  // the 0/1 after " held="

// A lock file that keeps vanishing under us (a cleaner racing every open)
// is an error after this many re-opens rather than a livelock.
constexpr int kMaxReopens = 64;

struct FlockKeyState final : KeyState {
  ScopedFd fd;
  bool held = false;
  bool writable = false;
  LockMode mode = LockMode::kExclusive;
};

bool ParseRecord(const char* buf, uint64_t* fence, bool* held) {
  if (memcmp(buf, kRecordMagic.data(), kRecordMagic.size()) != 0) return false;
  if (!absl::SimpleAtoi(absl::string_view(buf + kFenceOffset, kFenceDigits),
                        fence)) {
    return false;
  }
  if (buf[kHeldOffset] != '0' && buf[kHeldOffset] != '1') return false;
  *held = buf[kHeldOffset] == '1';
  return true;
}

void FormatRecord(char* buf, uint64_t fence, pid_t pid) {
  // snprintf writes a NUL after the 64 bytes, hence the larger buffer.
  snprintf(buf, kRecordSize + 1, "ipclock-flock/1 fence=%020" PRIu64 " held=1 pid=%09d\n",
           fence, static_cast<int>(pid));
}

class FlockStore final : public StoreWithState<FlockKeyState> {
 public:
  FlockStore(const FlockStoreOptions& options, std::string dir, ScopedFd dirfd)
      : options_(options), dir_(std::move(dir)) {
    dirfd_.store(dirfd.valid() ? dirfd.release() : AT_FDCWD);
    record_ = options_.holder_record &&
              options_.naming == FlockStoreOptions::Naming::kSymfony;
    describe_ = options_.naming == FlockStoreOptions::Naming::kSymfony
                    ? absl::StrCat("flock://", dir_)
                    : absl::StrCat("flock (exact paths",
                                   dir_.empty() ? "" : " under ", dir_, ")");
  }

  ~FlockStore() override {
    int fd = dirfd_.load();
    if (fd >= 0) close(fd);
    for (int old : retired_dirfds_) close(old);
  }

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override {
    Capabilities c;
    c.blocking = true;
    c.shared = true;
    c.fencing = record_;
    c.owner_death = record_;
    c.scope = Scope::kLocal;
    return c;
  }

  absl::StatusOr<bool> Save(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status PutOffExpiration(Key&, absl::Duration) override {
    return absl::OkStatus();  // flock locks have no lease
  }
  absl::Status Delete(Key& key) override;
  absl::StatusOr<bool> Exists(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

 private:
  std::string PathOf(const Key& key) const {
    if (options_.naming == FlockStoreOptions::Naming::kPath) {
      if (!key.resource().empty() && key.resource()[0] == '/') return key.resource();
      return dir_.empty() ? key.resource() : absl::StrCat(dir_, "/", key.resource());
    }
    return absl::StrCat(dir_, "/", SymfonyFlockFileName(key.resource()));
  }

  absl::Status OpenLockFile(const Key& key, FlockKeyState* st);
  absl::Status OpenSymfonyFile(const Key& key, FlockKeyState* st);
  absl::Status OpenExactPath(const Key& key, FlockKeyState* st);
  absl::Status ReopenVanishedDir();
  absl::Status OpenError(int err, const Key& key, absl::string_view what);
  absl::Status OnAcquired(Key& key, FlockKeyState* st, LockMode mode);

  const FlockStoreOptions options_;
  const std::string dir_;
  std::string describe_;
  bool record_ = false;
  // The lock dir, opened once and validated; files are opened relative to
  // it so that nobody can swap a path component between check and use. If
  // the dir is deleted (a tmp cleaner, logout) it is re-created and the old
  // descriptor retired, not closed, since another thread may be using it.
  std::atomic<int> dirfd_{-1};
  std::mutex reopen_mu_;
  std::vector<int> retired_dirfds_;
};

absl::Status FlockStore::OpenError(int err, const Key& key,
                                   absl::string_view what) {
  std::string path = PathOf(key);
  if (err == ELOOP) {
    return StoreError(absl::StatusCode::kPermissionDenied, describe_,
                      key.resource(),
                      absl::StrCat("refusing ", path,
                                   ": it is a symbolic link (lock files are "
                                   "opened with O_NOFOLLOW)"));
  }
  return ErrnoError(err, describe_, key.resource(), absl::StrCat(what, " ", path));
}

absl::Status FlockStore::ReopenVanishedDir() {
  std::lock_guard<std::mutex> guard(reopen_mu_);
  int current = dirfd_.load();
  struct stat st;
  if (fstat(current, &st) == 0 && st.st_nlink > 0) return absl::OkStatus();
  absl::StatusOr<ScopedFd> fresh = OpenLockDir(dir_, options_.dir_mode, describe_);
  if (!fresh.ok()) return fresh.status();
  retired_dirfds_.push_back(current);
  dirfd_.store(fresh->release());
  return absl::OkStatus();
}

// Symfony's FlockStore opens r+, then r, then creates with 'x' and chmods to
// 0666. We follow the same order so that a file either side creates works for
// the other, with our own mode and O_NOFOLLOW.
absl::Status FlockStore::OpenSymfonyFile(const Key& key, FlockKeyState* st) {
  const std::string name = SymfonyFlockFileName(key.resource());
  const int base = O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
  bool reopened_dir = false;
  for (int attempt = 0; attempt < kMaxReopens; ++attempt) {
    int dirfd = dirfd_.load(std::memory_order_acquire);
    int fd = openat(dirfd, name.c_str(), O_RDWR | base);
    if (fd >= 0) {
      st->fd.reset(fd);
      st->writable = true;
      return absl::OkStatus();
    }
    if (errno == EACCES) {
      fd = openat(dirfd, name.c_str(), O_RDONLY | base);
      if (fd < 0) return OpenError(errno, key, "open");
      st->fd.reset(fd);
      st->writable = false;
      return absl::OkStatus();
    }
    if (errno != ENOENT) return OpenError(errno, key, "open");
    fd = openat(dirfd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | base,
                options_.file_mode);
    if (fd >= 0) {
      // O_CREAT's mode is cut by the umask; the configured mode is a promise
      // to other users (e.g. 0666 for a PHP peer), so set it exactly.
      fchmod(fd, options_.file_mode);
      st->fd.reset(fd);
      st->writable = true;
      return absl::OkStatus();
    }
    if (errno == EEXIST) continue;  // someone else created it just now
    if (errno == ENOENT && !reopened_dir) {
      // The dir itself is gone: re-create it once.
      if (absl::Status s = ReopenVanishedDir(); !s.ok()) return s;
      reopened_dir = true;
      continue;
    }
    return OpenError(errno, key, "create");
  }
  return StoreError(absl::StatusCode::kUnavailable, describe_, key.resource(),
                    absl::StrCat(PathOf(key), " vanished ", kMaxReopens,
                                 " times while being opened"));
}

// As util-linux flock(1) opens its file: read-only, created if missing (mode
// 0666 less the umask), a directory if that is what the path names. Unlike
// flock(1) a symlink is refused: a planted link could point anywhere.
absl::Status FlockStore::OpenExactPath(const Key& key, FlockKeyState* st) {
  if (key.resource().find('\0') != std::string::npos) {
    return StoreError(absl::StatusCode::kInvalidArgument, describe_,
                      key.resource(), "a path cannot contain a NUL byte");
  }
  const std::string path = PathOf(key);
  int dirfd = dirfd_.load(std::memory_order_acquire);
  const char* name = path.c_str();
  if (!dir_.empty() && path[0] != '/') {
    name = key.resource().c_str();
  } else {
    dirfd = AT_FDCWD;
  }
  int fd = openat(dirfd, name,
                  O_RDONLY | O_CREAT | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                  0666);
  if (fd < 0 && errno == EISDIR) {
    fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  }
  if (fd < 0) return OpenError(errno, key, "open");
  st->fd.reset(fd);
  st->writable = false;
  return absl::OkStatus();
}

absl::Status FlockStore::OpenLockFile(const Key& key, FlockKeyState* st) {
  return options_.naming == FlockStoreOptions::Naming::kSymfony
             ? OpenSymfonyFile(key, st)
             : OpenExactPath(key, st);
}

absl::Status FlockStore::OnAcquired(Key& key, FlockKeyState* st, LockMode mode) {
  key.set_previous_owner_died(false);
  key.set_fence(std::nullopt);
  if (!record_) return absl::OkStatus();
  char buf[kRecordSize + 1];
  uint64_t fence = 0;
  bool held_mark = false;
  ssize_t n = pread(st->fd.get(), buf, kRecordSize, 0);
  if (n == static_cast<ssize_t>(kRecordSize) && !ParseRecord(buf, &fence, &held_mark)) {
    fence = 0;  // a file another tool wrote: start counting afresh
    held_mark = false;
  }
  // A set mark under a lock we were just granted means its writer never ran
  // its release: it died holding the lock (flock itself released on death).
  key.set_previous_owner_died(held_mark);
  if (mode != LockMode::kExclusive || !st->writable) return absl::OkStatus();
  FormatRecord(buf, fence + 1, CurrentPid());
  n = pwrite(st->fd.get(), buf, kRecordSize, 0);
  if (n != static_cast<ssize_t>(kRecordSize)) {
    // Fail closed: a holder that cannot write its record (a full filesystem)
    // would give the next holder a stale fence.
    int err = n < 0 ? errno : EIO;
    flock(st->fd.get(), LOCK_UN);
    st->held = false;
    return ErrnoError(err, describe_, key.resource(),
                      absl::StrCat("write holder record to ", PathOf(key)));
  }
  key.set_fence(fence + 1);
  return absl::OkStatus();
}

absl::StatusOr<bool> FlockStore::Save(Key& key, LockMode mode, Deadline deadline) {
  key.MarkUnserializable();
  FlockKeyState* st = &EnsureState(key);
  if (st->held && st->mode == mode) return true;
  const bool converting = st->held;
  const LockMode previous_mode = st->mode;

  for (int reopens = 0;; ++reopens) {
    if (reopens >= kMaxReopens) {
      return StoreError(absl::StatusCode::kUnavailable, describe_, key.resource(),
                        absl::StrCat(PathOf(key), " was unlinked or replaced ",
                                     kMaxReopens, " times while we waited"));
    }
    if (!st->fd.valid()) {
      if (absl::Status s = OpenLockFile(key, st); !s.ok()) return s;
    }
    if (converting && previous_mode == LockMode::kExclusive && record_ &&
        st->writable) {
      // Demotion: the writer is leaving cleanly, so clear its mark first.
      pwrite(st->fd.get(), "0", 1, kHeldOffset);
    }
    int err = FlockUntil(st->fd.get(),
                         mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH,
                         deadline);
    if (err == EWOULDBLOCK) {
      if (converting) {
        // Linux drops our shared lock before it checks for conflicts with
        // the exclusive one (flock_lock_inode), so a failed promotion has
        // cost the shared lock. Take it back if no writer got in.
        st->held = flock(st->fd.get(), LOCK_SH | LOCK_NB) == 0;
      }
      return false;
    }
    if (err != 0) {
      st->held = false;
      return ErrnoError(err, describe_, key.resource(),
                        absl::StrCat("flock ", PathOf(key)));
    }
    // We hold a lock on the inode we opened. If that inode is no longer the
    // file at the path (unlinked, or replaced by rename), another process
    // opening the path now gets a different inode and a lock of its own:
    // drop ours and start over on the new file.
    struct stat sb;
    if (fstat(st->fd.get(), &sb) != 0) {
      int e = errno;
      flock(st->fd.get(), LOCK_UN);
      st->held = false;
      return ErrnoError(e, describe_, key.resource(), absl::StrCat("fstat ", PathOf(key)));
    }
    if (sb.st_nlink == 0) {
      flock(st->fd.get(), LOCK_UN);
      st->fd.reset();
      st->held = false;
      continue;
    }
    if (options_.naming == FlockStoreOptions::Naming::kSymfony && !S_ISREG(sb.st_mode)) {
      flock(st->fd.get(), LOCK_UN);
      st->fd.reset();
      st->held = false;
      return StoreError(absl::StatusCode::kFailedPrecondition, describe_,
                        key.resource(),
                        absl::StrCat(PathOf(key), " is not a regular file"));
    }
    st->held = true;
    st->mode = mode;
    if (absl::Status s = OnAcquired(key, st, mode); !s.ok()) return s;
    return true;
  }
}

absl::Status FlockStore::Delete(Key& key) {
  auto* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  absl::Status result;
  if (st->mode == LockMode::kExclusive && record_ && st->writable) {
    if (pwrite(st->fd.get(), "0", 1, kHeldOffset) != 1) {
      result = ErrnoError(errno, describe_, key.resource(),
                          absl::StrCat("clear holder record in ", PathOf(key)));
    }
  }
  // The descriptor stays open so that the next acquisition by this key costs
  // one flock call; it is closed when the key (the Lock) is destroyed.
  if (flock(st->fd.get(), LOCK_UN) != 0 && result.ok()) {
    result = ErrnoError(errno, describe_, key.resource(),
                        absl::StrCat("unlock ", PathOf(key)));
  }
  st->held = false;
  if (result.ok()) {
    // Released either way; but a lock on a file that was unlinked while we
    // held it excluded nobody since, and the caller must hear of it.
    struct stat sb;
    if (fstat(st->fd.get(), &sb) == 0 && sb.st_nlink == 0) {
      result = StoreError(absl::StatusCode::kAborted, describe_, key.resource(),
                          absl::StrCat("the lock file ", PathOf(key),
                                       " was deleted while the lock was held"));
    }
  }
  return result;
}

absl::Status FlockStore::CheckHeld(Key& key) {
  FlockKeyState* st = state(key);
  if (st == nullptr || !st->held) {
    return StoreError(absl::StatusCode::kAborted, describe_, key.resource(),
                      "the lock is not held");
  }
  struct stat sb;
  if (fstat(st->fd.get(), &sb) != 0) {
    return ErrnoError(errno, describe_, key.resource(), absl::StrCat("fstat ", PathOf(key)));
  }
  if (sb.st_nlink == 0) {
    return StoreError(absl::StatusCode::kAborted, describe_, key.resource(),
                      absl::StrCat("the lock file ", PathOf(key),
                                   " was deleted while the lock was held"));
  }
  return absl::OkStatus();
}

WatchTargets FlockStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  if (const FlockKeyState* st = state(key); st != nullptr && st->held) {
    targets.inode_fds.push_back(st->fd.get());
  }
  return targets;
}

absl::StatusOr<bool> FlockStore::Exists(Key& key) {
  auto* st = state(key);
  if (st == nullptr || !st->held) return false;
  // A lock on a file that has since been unlinked excludes nobody.
  struct stat sb;
  if (fstat(st->fd.get(), &sb) != 0) {
    return ErrnoError(errno, describe_, key.resource(), absl::StrCat("fstat ", PathOf(key)));
  }
  return sb.st_nlink > 0;
}

}  // namespace

std::string FlockFileName(absl::string_view resource) {
  return SymfonyFlockFileName(resource);
}

std::string DefaultFlockDir() {
  if (geteuid() == 0) return "/run/lock/ipclock";
  // secure_getenv: a setuid program must not take its lock dir from the
  // caller's environment.
  const char* runtime = secure_getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && runtime[0] == '/') {
    return absl::StrCat(runtime, "/ipclock");
  }
  return absl::StrCat("/tmp/ipclock-", geteuid());
}

absl::StatusOr<std::shared_ptr<Store>> NewFlockStore(const FlockStoreOptions& options) {
  if ((options.dir_mode & ~07777u) != 0 || (options.file_mode & ~0777u) != 0) {
    return absl::InvalidArgumentError("flock: dir_mode or file_mode out of range");
  }
  std::string dir = options.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  ScopedFd dirfd;
  if (options.naming == FlockStoreOptions::Naming::kSymfony || !dir.empty()) {
    if (dir.empty()) dir = DefaultFlockDir();
    if (absl::Status s = GuardRemoveIpc(IpcKind::kLockDir, dir, options.remove_ipc,
                                        absl::StrCat("flock://", dir));
        !s.ok()) {
      return s;
    }
    absl::StatusOr<ScopedFd> opened =
        OpenLockDir(dir, options.dir_mode, absl::StrCat("flock://", dir));
    if (!opened.ok()) return opened.status();
    dirfd = *std::move(opened);
  }
  return std::shared_ptr<Store>(
      std::make_shared<FlockStore>(options, std::move(dir), std::move(dirfd)));
}

absl::StatusOr<std::shared_ptr<Store>> FlockStoreFromDsn(Dsn& dsn,
    const StoreOptions& store_options) {
  FlockStoreOptions options;
  if (dsn.has_authority() && !dsn.host().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: bad DSN \"", dsn.redacted(),
        "\": flock takes a dir as flock:///absolute/dir (three slashes)"));
  }
  if (!dsn.path().empty()) {
    if (dsn.path()[0] != '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          "ipclock: bad DSN \"", dsn.redacted(),
          "\": the lock dir must be an absolute path (flock:///dir)"));
    }
    options.dir = dsn.path();
  }
  if (std::optional<std::string> naming = dsn.TakeOption("naming")) {
    if (*naming == "symfony") {
      options.naming = FlockStoreOptions::Naming::kSymfony;
    } else if (*naming == "path") {
      options.naming = FlockStoreOptions::Naming::kPath;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "ipclock: bad DSN \"", dsn.redacted(), "\": naming=", *naming,
          ": expected symfony or path"));
    }
  }
  absl::StatusOr<unsigned> dir_mode = dsn.TakeMode("dir_mode", options.dir_mode);
  if (!dir_mode.ok()) return dir_mode.status();
  options.dir_mode = *dir_mode;
  absl::StatusOr<unsigned> file_mode = dsn.TakeMode("file_mode", options.file_mode);
  if (!file_mode.ok()) return file_mode.status();
  options.file_mode = *file_mode;
  absl::StatusOr<bool> record = dsn.TakeBool("record", options.holder_record);
  if (!record.ok()) return record.status();
  options.holder_record = *record;
  absl::StatusOr<RemoveIpcPolicy> remove_ipc =
      TakeRemoveIpcPolicy(dsn, store_options.remove_ipc);
  if (!remove_ipc.ok()) return remove_ipc.status();
  options.remove_ipc = *remove_ipc;
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return NewFlockStore(options);
}

size_t FlockHolderRecordSize() { return kRecordSize; }

bool ParseFlockHolderRecord(absl::string_view bytes, FlockHolderRecord* out) {
  // " pid=" and 9 digits follow the held mark (see FormatRecord).
  constexpr size_t kPidOffset = kHeldOffset + 6;
  if (bytes.size() < kRecordSize) return false;
  FlockHolderRecord r;
  if (!ParseRecord(bytes.data(), &r.fence, &r.held)) return false;
  int pid = 0;
  if (!absl::SimpleAtoi(bytes.substr(kPidOffset, 9), &pid)) return false;
  r.pid = pid;
  *out = r;
  return true;
}

const StoreDriver kFlockDriver = {&FlockStoreFromDsn, &ListFlockLocks};

}  // namespace ipclock
