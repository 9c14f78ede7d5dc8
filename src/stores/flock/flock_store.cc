// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// FlockStore. See include/ipclock/stores/flock_store.h for the contract (what is
// checked when, the holder record, the idle files); the caveats of flock(2)
// are written beside the code that deals with them.

#include "stores/flock/flock_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/capability_flags.h"
#include "core/lock_access.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "core/platform_deadline.h"
#include "platform/errors.h"
#include "platform/files.h"
#include "platform/process_id.h"
#include "platform/timed_flock.h"
#include "stores/flock/flock_file.h"
#include "stores/flock/flock_file_cache.h"
#include "stores/flock/flock_naming.h"
#include "stores/ticket_queue/ticket_queue.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "flock";

// A lock file that keeps vanishing under us (a cleaner racing every open)
// is an error after this many re-opens rather than a livelock.
constexpr int kMaxReopens = 64;

struct FlockKeyState final : KeyState {
  explicit FlockKeyState(std::shared_ptr<FlockFileCache> c) : cache(std::move(c)) {}
  ~FlockKeyState() override;

  std::shared_ptr<FlockFileCache> cache;
  std::unique_ptr<FlockFile> file;
  bool held = false;
  LockMode mode = LockMode::kExclusive;
};

void CountHeld(const FlockFile& f, int delta) {
  if (f.dir) f.dir->held.fetch_add(delta, std::memory_order_seq_cst);
}

FlockKeyState::~FlockKeyState() {
  if (file == nullptr) return;
  if (held) {
    // Destroyed holding (the Lock was abandoned, or auto_release is off):
    // closing the file releases the flock, as a process's death would, and
    // the holder record's mark says so to the next holder.
    CountHeld(*file, -1);
    return;
  }
  if (file->pid == CurrentPid()) cache->Put(std::move(file));
}

class FlockStore final : public StoreWithRelease<FlockKeyState> {
 public:
  FlockStore(const FlockStoreOptions& options, std::string dir_path,
             std::shared_ptr<FlockDir> dir)
      : options_(options),
        dir_path_(std::move(dir_path)),
        symfony_(options.naming == FlockStoreOptions::Naming::kSymfony),
        record_(options.holder_record && symfony_),
        fair_(options.fair),
        cache_(std::make_shared<FlockFileCache>(options.idle_files)),
        dir_(std::move(dir)) {
    current_dir_.store(dir_.get(), std::memory_order_release);
    describe_ = symfony_ ? absl::StrCat("flock://", dir_path_)
                         : absl::StrCat("flock (exact paths",
                                        dir_path_.empty() ? "" : " under ", dir_path_, ")");
  }

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override { return FlockCapabilities(options_); }

  // For FlockDescriptorOf().
  int HeldDescriptor(const Key& key) const {
    const FlockKeyState* st = state(key);
    return st != nullptr && st->held && st->file != nullptr ? st->file->fd.get() : -1;
  }

 private:
  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status Extend(Key&, absl::Duration) override {
    return absl::OkStatus();  // flock locks have no lease
  }
  // Release() and ReleaseAsDead(): `died` leaves the holder record's mark set, as
  // a holder that died would.
  absl::Status DoRelease(Key& key, bool died) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

  std::shared_ptr<FlockDir> CurrentDir() const {
    std::lock_guard<std::mutex> guard(dir_mu_);
    return dir_;
  }
  absl::Status OpenFile(const Key& key, FlockKeyState* st);
  absl::Status ReplaceDir(const std::shared_ptr<FlockDir>& seen, const Key& key);
  // Where the held file and its dir are; updates the check times when both
  // are in place. OK; Aborted naming what was lost (and `*loss`); or the
  // error of a stat that failed otherwise.
  enum class Loss { kNone, kFile, kDir };
  absl::Status Check(const Key& key, FlockFile& f, int64_t now, Loss* loss);
  bool CheckIsDue(const FlockFile& f, int64_t now) const;
  absl::Status OnAcquired(Key& key, FlockKeyState* st, LockMode mode);
  // flock(2) in turn (`fair`): at once while nobody queues in the file's
  // queue, else behind those who do (stores/ticket_queue/ticket_queue.h). Returns what
  // FlockUntil() would; `*place` keeps the caller's place until it has the
  // lock (or gave up) and drops it.
  absl::StatusOr<int> FlockInTurn(const Key& key, FlockFile& f, int operation,
                                  Deadline deadline, std::optional<QueuePlace>* place,
                                  bool* waited);
  // Lets go of what `st` holds after a failure, so that the key holds
  // nothing (fail closed).
  void Unlock(FlockKeyState* st);

  const FlockStoreOptions options_;
  const std::string dir_path_;
  const bool symfony_;
  const bool record_;
  const bool fair_;
  std::string describe_;
  const std::shared_ptr<FlockFileCache> cache_;
  // The lock dir. Files are opened relative to it, so that nobody can swap
  // a path component between our check and our use; when it vanishes it is
  // made anew (ReplaceDir) and the old one lives on in the files opened in
  // it until they are closed.
  mutable std::mutex dir_mu_;
  std::shared_ptr<FlockDir> dir_;  // guarded by dir_mu_; null: exact paths, no dir
  // dir_.get(), read without the mutex to find an idle file of the current
  // dir. A stale value is harmless: a file of a retired dir is found out by
  // the check that follows its acquisition.
  std::atomic<const FlockDir*> current_dir_{nullptr};
};

bool FlockStore::CheckIsDue(const FlockFile& f, int64_t now) const {
  if (now - f.checked_ns > kFlockCheckAfterNanos) return true;
  return f.dir && now - f.dir->checked_ns.load(std::memory_order_relaxed) >
                      kFlockCheckAfterNanos;
}

absl::Status FlockStore::Check(const Key& key, FlockFile& f, int64_t now, Loss* loss) {
  *loss = Loss::kNone;
  Whereabouts file_at = Whereabouts::kInPlace;
  Whereabouts dir_at = Whereabouts::kInPlace;
  off_t size = 0;
  if (int err = f.Locate(&file_at, &size); err != 0) {
    return ErrnoError(err, describe_, key.resource(), absl::StrCat("stat ", f.Path()));
  }
  if (f.dir) {
    if (f.dir->retired.load(std::memory_order_seq_cst)) {
      dir_at = Whereabouts::kMoved;
    } else if (int err = f.dir->Locate(&dir_at); err != 0) {
      return ErrnoError(err, describe_, key.resource(),
                        absl::StrCat("stat lock dir ", f.dir->path()));
    }
  }
  if (dir_at != Whereabouts::kInPlace) {
    *loss = Loss::kDir;
    return LostError(describe_, key.resource(),
                     absl::StrCat("lock dir ", f.dir->path(),
                                  dir_at == Whereabouts::kRemoved ? " was removed"
                                                                  : " was renamed or replaced",
                                  " while the lock was held (lock file ", f.name, ")"));
  }
  if (file_at != Whereabouts::kInPlace) {
    *loss = Loss::kFile;
    return LostError(describe_, key.resource(),
                     absl::StrCat("lock file ", f.Path(),
                                  file_at == Whereabouts::kRemoved ? " was deleted"
                                                                   : " was renamed or replaced",
                                  " while the lock was held"));
  }
  // Cut short by another process (a truncation, then a few bytes written):
  // writes through the page would land past the end of the file, where no
  // pread sees them. The next record write goes through pwrite instead.
  if (f.page != nullptr && size < static_cast<off_t>(kFlockRecordSize)) {
    f.page.reset();
    f.record_complete = false;
  }
  f.checked_ns = now;
  if (f.dir) f.dir->checked_ns.store(now, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::Status FlockStore::ReplaceDir(const std::shared_ptr<FlockDir>& seen, const Key& key) {
  std::lock_guard<std::mutex> guard(dir_mu_);
  if (dir_ != seen) return absl::OkStatus();  // another thread made it anew
  // Retired before the count is read, and acquisitions count themselves
  // before they read `retired` (both seq_cst): either we see their lock, or
  // they see the dir retired and let go.
  seen->retired.store(true, std::memory_order_seq_cst);
  const int held = seen->held.load(std::memory_order_seq_cst);
  if (held > 0) {
    seen->retired.store(false, std::memory_order_seq_cst);
    return TransientError(
        describe_, key.resource(),
        absl::StrCat("lock dir ", dir_path_, " was removed, renamed or replaced while ",
                     held, held == 1 ? " lock" : " locks",
                     " of this store were held in it; it is made anew once they "
                     "are released (their holders are told the lock was lost)"));
  }
  absl::StatusOr<std::shared_ptr<FlockDir>> fresh =
      FlockDir::Open(dir_path_, options_.dir_mode, options_.map_record, describe_);
  if (!fresh.ok()) {
    seen->retired.store(false, std::memory_order_seq_cst);
    return fresh.status();
  }
  dir_ = *std::move(fresh);
  current_dir_.store(dir_.get(), std::memory_order_release);
  cache_->Clear();  // idle files of the old dir
  return absl::OkStatus();
}

absl::Status FlockStore::OpenFile(const Key& key, FlockKeyState* st) {
  if (!symfony_ && key.resource().find('\0') != std::string::npos) {
    return ConfigurationError(describe_, key.resource(),
                              "a path cannot contain a NUL byte");
  }
  // An absolute path in exact-path mode is resolved from "/", not the dir.
  const bool own_path = !symfony_ && key.resource()[0] == '/';
  FlockOpenRequest request;
  bool replaced = false;
  bool cleared = false;
  for (;;) {
    const FlockDir* want = own_path ? nullptr : current_dir_.load(std::memory_order_acquire);
    if (std::unique_ptr<FlockFile> idle = cache_->Take(key.resource(), want)) {
      st->file = std::move(idle);
      return absl::OkStatus();
    }
    std::shared_ptr<FlockDir> dir = own_path ? nullptr : CurrentDir();
    if (request.resource.empty()) {
      // Only for a file not open yet: the SHA-256 of Symfony's name is the
      // dearest part of opening one.
      request.resource = key.resource();
      request.name = symfony_ ? SymfonyFlockFileName(key.resource()) : key.resource();
      request.file_mode = options_.file_mode;
      request.symfony = symfony_;
      request.write_name = symfony_ && record_;
    }
    request.dir = dir;
    FlockOpenFailure failure;
    absl::StatusOr<std::unique_ptr<FlockFile>> opened =
        OpenFlockFile(request, describe_, &failure);
    if (opened.ok()) {
      st->file = *std::move(opened);
      return absl::OkStatus();
    }
    if ((failure.err == EMFILE || failure.err == ENFILE) && !cleared &&
        cache_->size() > 0) {
      // Out of descriptors: our idle files are the first to go.
      cache_->Clear();
      cleared = true;
      continue;
    }
    if (failure.dir_missing && dir && !replaced) {
      if (absl::Status s = ReplaceDir(dir, key); !s.ok()) return s;
      replaced = true;
      continue;
    }
    return opened.status();
  }
}

void FlockStore::Unlock(FlockKeyState* st) {
  if (st->held) CountHeld(*st->file, -1);
  st->held = false;
  // If unlocking fails, closing the only descriptor of the open file
  // releases the lock all the same.
  if (FlockFd(st->file->fd.get(), LOCK_UN) != 0) st->file.reset();
}

absl::Status FlockStore::OnAcquired(Key& key, FlockKeyState* st, LockMode mode) {
  KeyWriter(key).set_previous_owner_died(false);
  KeyWriter(key).set_fence(std::nullopt);
  if (!record_) return absl::OkStatus();
  FlockFile& f = *st->file;
  if (f.acquisitions > 1) f.MapRecordIfUseful();
  FlockRecordFields record;
  bool valid = false;
  if (int err = f.ReadRecord(&record, &valid); err != 0) {
    // Without the record the next fence is unknown: fail rather than start
    // counting again from 0 (fences never go back).
    std::string path = f.Path();
    Unlock(st);
    return ErrnoError(err, describe_, key.resource(),
                      absl::StrCat("read holder record of ", path));
  }
  if (valid) f.last_fence = std::max(f.last_fence, record.fence);
  // A set mark under a lock we were just granted means its writer never ran
  // its release: it died holding the lock (flock itself released on death).
  KeyWriter(key).set_previous_owner_died(valid && record.held);
  if (mode != LockMode::kExclusive || !f.writable) return absl::OkStatus();
  FlockRecordFields mine;
  mine.fence = f.last_fence + 1;
  mine.held = true;
  mine.pid = f.pid;  // this process: a file opened before a fork is not used
  if (int err = f.WriteRecord(mine); err != 0) {
    // Fail closed: a holder that cannot write its record (a full
    // filesystem) would give the next holder a stale fence.
    std::string path = f.Path();
    Unlock(st);
    return ErrnoError(err, describe_, key.resource(),
                      absl::StrCat("write holder record to ", path));
  }
  f.last_fence = mine.fence;
  KeyWriter(key).set_fence(mine.fence);
  return absl::OkStatus();
}

absl::StatusOr<int> FlockStore::FlockInTurn(const Key& key, FlockFile& f, int operation,
                                            Deadline deadline,
                                            std::optional<QueuePlace>* place, bool* waited) {
  TicketQueueShared* words = nullptr;
  if (int err = f.MapQueue(&words); err != 0) {
    if (err == EACCES) {
      return MisuseError(describe_, key.resource(),
                         absl::StrCat("fair=true: lock file ", f.Path(),
                                      " is read-only for this user, so its waiters' "
                                      "queue cannot be joined (let every user of the "
                                      "lock write it: file_mode=0666)"));
    }
    if (err == ENOTSUP) {
      return MisuseError(describe_, key.resource(),
                         absl::StrCat("fair=true: the lock dir of ", f.Path(),
                                      " is not on a filesystem whose pages processes "
                                      "share (tmpfs, ext4, xfs, btrfs, f2fs)"));
    }
    return ErrnoError(err, describe_, key.resource(),
                      absl::StrCat("map the waiters' queue of ", f.Path()));
  }
  TicketQueue queue(words);
  // A try never jumps the queue: only while nobody queues is the lock tried
  // (and not again when the Lock's own try found it busy an instant ago).
  if (queue.Empty() && !key.tried_just_now()) {
    const int err = FlockUntil(f.fd.get(), operation, MonotonicDeadline::Past());
    if (err != EWOULDBLOCK) return err;
  }
  if (deadline.has_passed()) return EWOULDBLOCK;
  *waited = true;
  place->emplace(queue, (operation & LOCK_SH) != 0 ? QueuedFor::kShared : QueuedFor::kExclusive);
  if (!(*place)->AwaitTurn(deadline, &key)) return EWOULDBLOCK;
  // First: only a holder stands between us and the lock now (and whoever
  // does not queue: PHP, flock(1), stores without `fair`). A cancellable
  // wait sleeps in slices, keeping its turn, and looks between them.
  // A blocking flock(2) is itself a try, so none is made before it.
  if (key.cancel_fd() < 0) return FlockWaitUntil(f.fd.get(), operation, ForPlatform(deadline));
  for (;;) {
    const Deadline slice =
        std::min(deadline, Deadline::In(absl::Nanoseconds(TicketQueue::kSliceNanos)));
    const int err = FlockWaitUntil(f.fd.get(), operation, ForPlatform(slice));
    if (err != EWOULDBLOCK || slice == deadline || key.cancelled()) return err;
  }
}

absl::StatusOr<bool> FlockStore::Acquire(Key& key, LockMode mode, Deadline deadline) {
  KeyWriter(key).MarkUnserializable();
  FlockKeyState* st = &EnsureState(key, cache_);
  if (st->held && st->mode == mode) return true;
  if (st->file != nullptr && !st->held && st->file->pid != CurrentPid()) {
    st->file.reset();  // a fork()ed child's copy of its parent's open file
  }
  const bool converting = st->held;
  const int operation = mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH;

  for (int reopens = 0;; ++reopens) {
    if (reopens >= kMaxReopens) {
      return TransientError(describe_, key.resource(),
                            absl::StrCat("the lock file was deleted or replaced ",
                                         kMaxReopens, " times while being locked"));
    }
    if (st->file == nullptr) {
      if (absl::Status s = OpenFile(key, st); !s.ok()) return s;
    }
    FlockFile& f = *st->file;
    if (converting && st->mode == LockMode::kExclusive && record_ && f.writable) {
      // Demotion: the writer is leaving cleanly, so clear its mark first.
      FlockRecordFields clean{f.last_fence, false, f.pid};
      if (int err = f.WriteRecord(clean); err != 0) {
        std::string path = f.Path();
        Unlock(st);
        return ErrnoError(err, describe_, key.resource(),
                          absl::StrCat("clear holder record in ", path));
      }
    }
    bool waited = false;
    // Dropped at the end of this pass: a place in the queue is given up
    // once the lock is held or the wait failed. A conversion holds the lock
    // already and does not queue.
    std::optional<QueuePlace> place;
    int err;
    if (fair_ && !converting) {
      absl::StatusOr<int> in_turn = FlockInTurn(key, f, operation, deadline, &place, &waited);
      if (!in_turn.ok()) return in_turn.status();
      err = *in_turn;
    } else if (key.tried_just_now() && !deadline.has_passed()) {
      // The Lock's try found it busy: block at once (flock(2) without
      // LOCK_NB is itself a try that waits).
      waited = true;
      err = FlockWaitUntil(f.fd.get(), operation, ForPlatform(deadline));
    } else {
      err = FlockUntil(f.fd.get(), operation, ForPlatform(deadline), &waited);
    }
    if (err == EWOULDBLOCK) {
      if (converting) {
        // Linux drops our shared lock before it checks for conflicts with
        // the exclusive one (flock_lock_inode), so a failed promotion has
        // cost the shared lock. Take it back if no writer got in.
        if (FlockFd(f.fd.get(), LOCK_SH | LOCK_NB) != 0) {
          CountHeld(f, -1);
          st->held = false;
        }
      }
      return false;
    }
    if (err != 0) {
      std::string path = f.Path();
      if (converting) Unlock(st);  // whatever the kernel left, hold nothing
      return ErrnoError(err, describe_, key.resource(), absl::StrCat("flock ", path));
    }
    if (!converting) {
      CountHeld(f, +1);
      st->held = true;
    }
    // Counted above before `retired` is read: see ReplaceDir.
    const bool retired = f.dir && f.dir->retired.load(std::memory_order_seq_cst);
    const int64_t now = Deadline::NowNanos();
    if (waited || retired || CheckIsDue(f, now)) {
      Loss loss = Loss::kNone;
      absl::Status where = Check(key, f, now, &loss);
      if (!where.ok()) {
        std::shared_ptr<FlockDir> dir = f.dir;
        Unlock(st);
        st->file.reset();
        // A conversion's lock was held before this call, so it was lost
        // while held; a stat that failed is an error as it is.
        if (converting || loss == Loss::kNone) return where;
        // Granted on a file that is no longer the one at its path: another
        // process opening the path now gets another file, and a lock of its
        // own. Start over on what the path names now.
        if (loss == Loss::kDir) {
          if (absl::Status s = ReplaceDir(dir, key); !s.ok()) return s;
        }
        continue;
      }
    }
    st->mode = mode;
    ++f.acquisitions;
    if (absl::Status s = OnAcquired(key, st, mode); !s.ok()) return s;
    return true;
  }
}

absl::Status FlockStore::DoRelease(Key& key, bool died) {
  FlockKeyState* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  FlockFile& f = *st->file;
  if (f.pid != CurrentPid()) {
    // A fork()ed child releasing its copy of its parent's lock: the lock
    // belongs to the open file, which the parent still has. Unlocking it
    // would release the parent's lock; closing our descriptor does not.
    CountHeld(f, -1);
    st->held = false;
    st->file.reset();
    return absl::OkStatus();
  }
  absl::Status result;
  if (st->mode == LockMode::kExclusive && record_ && f.writable) {
    // The whole record, not just the mark: it also mends a record that a
    // truncation cut off while we held the lock, so fences do not go back.
    FlockRecordFields clean{f.last_fence, died, f.pid};
    if (int err = f.WriteRecord(clean); err != 0) {
      result = ErrnoError(err, describe_, key.resource(),
                          absl::StrCat("clear holder record in ", f.Path()));
    }
  }
  const int64_t now = Deadline::NowNanos();
  const bool check = CheckIsDue(f, now) ||
                     (f.dir && f.dir->retired.load(std::memory_order_relaxed));
  // The file stays open, so that the next acquisition by this key costs one
  // flock call; it goes to the store's idle files when the key is destroyed.
  CountHeld(f, -1);
  st->held = false;
  if (int err = FlockFd(f.fd.get(), LOCK_UN); err != 0) {
    if (result.ok()) {
      result = ErrnoError(err, describe_, key.resource(), absl::StrCat("unlock ", f.Path()));
    }
    st->file.reset();  // closing the only descriptor releases the lock
    return result;
  }
  if (check) {
    // Released either way; but a lock on a file that was deleted or moved
    // while we held it excluded nobody since, and the caller must hear it.
    Loss loss = Loss::kNone;
    absl::Status where = Check(key, f, now, &loss);
    if (loss != Loss::kNone) {
      st->file.reset();  // no longer the file at the path: never reuse it
      return where;
    }
  }
  return result;
}

absl::Status FlockStore::CheckHeld(Key& key) {
  FlockKeyState* st = state(key);
  if (st == nullptr || !st->held) {
    return NotHeldError(describe_, key.resource());
  }
  Loss loss;
  return Check(key, *st->file, Deadline::NowNanos(), &loss);
}

absl::StatusOr<bool> FlockStore::IsHeld(Key& key) {
  FlockKeyState* st = state(key);
  if (st == nullptr || !st->held) return false;
  // A lock on a file that is no longer the one at its path excludes nobody.
  Loss loss;
  absl::Status where = Check(key, *st->file, Deadline::NowNanos(), &loss);
  if (loss != Loss::kNone) return false;
  if (!where.ok()) return where;
  return true;
}

WatchTargets FlockStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  if (const FlockKeyState* st = state(key); st != nullptr && st->held) {
    const FlockFile& f = *st->file;
    targets.inode_fds.push_back(f.fd.get());
    // inotify sees the file and its dir go, and the dirs above renamed
    // (FlockDir::ancestors()); where those cannot be watched, the probe,
    // every 50 ms, sees a dir above renamed or replaced; the mount table,
    // something mounted over the file, the dir or above.
    targets.mounts = true;
    if (f.dir) {
      targets.inode_fds.push_back(f.dir->fd());
      if (f.dir->ancestors().empty()) {
        targets.probe = f.dir->probe();
      } else {
        for (const ScopedFd& above : f.dir->ancestors()) {
          targets.dir_fds_above.push_back(above.get());
        }
      }
      // Together they see every way the file can stop being the one at
      // its path, where inotify sees every change made to the inodes: on
      // the local filesystems whose pages processes share, not on a
      // network or FUSE one, changed by other hosts or a daemon. The
      // interval check is then a safety net. (A lock file of its own path,
      // naming=path, has no dir watched: its check stays at the interval.)
      targets.events_tell_all = f.dir->pages_shared();
    } else {
      targets.probe = MakePathProbe(f.Path(), f.dev, f.ino);
    }
  }
  return targets;
}

}  // namespace

Capabilities FlockCapabilities(const FlockStoreOptions& options) {
  // Holder records (fences, owner deaths) are kept in Symfony-named files.
  const bool record =
      options.holder_record && options.naming == FlockStoreOptions::Naming::kSymfony;
  return MakeCapabilities(kFlockEntry.scope, kCanBlock | kCanShare |
                                                When(record, kCanFence | kSeesOwnerDeath) |
                                                When(options.fair, kIsFair | kCanCancel));
}

int FlockDescriptorOf(const Lock& lock) {
  if (!lock.is_acquired() || lock.store().name() != kName) return -1;
  // The name says which class it is (no RTTI in ipclock).
  const FlockStore& store = static_cast<const FlockStore&>(lock.store());
  return store.HeldDescriptor(internal::LockAccess::key(lock));
}

std::shared_ptr<Store> MakeFlockStore(const FlockStoreOptions& options,
                                      std::string dir_path,
                                      std::shared_ptr<FlockDir> dir) {
  return std::make_shared<FlockStore>(options, std::move(dir_path), std::move(dir));
}

}  // namespace ipclock
