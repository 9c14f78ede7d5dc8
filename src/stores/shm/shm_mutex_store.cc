// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ShmMutexStore: the operations of the shm store. See
// include/ipclock/stores/shm_store.h for the contract, shm_segment.h for the
// segment, shm_slot_table.h for how a name finds its slot. The caveats of
// robust pthread mutexes are in platform/robust_mutex.h; those of this
// store's use of them are written beside the code below.

#include "stores/shm/shm_mutex_store.h"

#include <errno.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "core/capability_flags.h"
#include "core/dsn.h"
#include "core/options_driver.h"
#include "core/removeipc_guard.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "core/platform_deadline.h"
#include "platform/errors.h"
#include "platform/mutex_futex.h"
#include "platform/process_id.h"
#include "platform/robust_mutex.h"
#include "platform/shm_mapping.h"
#include "platform/sleep.h"
#include "stores/shm/shm_inspect.h"
#include "stores/shm/shm_segment.h"
#include "stores/shm/wait_mark.h"
#include "stores/shm/shm_slot_table.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "shm";

// A Key whose slot is rebound under it this many times in a row during one
// acquisition gives up rather than chase a thrashing table forever.
constexpr int kMaxRebinds = 1000;

using Loss = ShmSegment::Loss;

// Segments in which a thread of this process may still hold a mutex that no
// Key will release: kept mapped until the process ends.
void KeepMapped(std::shared_ptr<ShmSegment> segment) {
  static std::mutex* mu = new std::mutex();
  static auto* kept = new std::vector<std::shared_ptr<ShmSegment>>();
  std::lock_guard<std::mutex> guard(*mu);
  kept->push_back(std::move(segment));
}

struct ShmKeyState final : KeyState {
  ShmKeyState(std::shared_ptr<ShmSegment> s, ShmBinding b)
      : segment(std::move(s)), slot(&segment->slot(b.index)), generation(b.generation) {}
  // Drops this key's reference to the slot. A held lock stays held: the
  // mutex belongs to its thread, not to this object (see shm_store.h). That
  // thread's robust list then points into the mapping, and glibc (at its
  // next robust lock) and the kernel (at its exit, to hand the lock on as
  // an owner death) write there: the mapping must outlive it, even when
  // the store goes.
  ~ShmKeyState() override {
    slot->refs.fetch_sub(1, std::memory_order_relaxed);
    if (held && owner_pid == CurrentPid()) KeepMapped(segment);
  }

  const std::shared_ptr<ShmSegment> segment;
  ShmSlot* const slot;
  const uint64_t generation;
  pid_t owner_tid = 0;
  pthread_t owner_thread{};
  pid_t owner_pid = 0;
  bool held = false;
  // The mark of this Key's last wait (wait_mark.h), kept past the
  // acquisition it ended in until the release has let the mutex go: its
  // fcntl then delays no waiter, while made at once it would delay this
  // one's return with the lock. Listings leave out a holder's own marks.
  // After `segment`, whose descriptor it needs at its end.
  std::optional<WaitMark> wait_mark;
};

// `pi`: the segment's mutexes inherit priority.
Capabilities ShmCapabilities(bool pi) {
  // Fair with `pi`: the kernel hands a priority-inheritance mutex to its
  // top waiter at the release (FUTEX_UNLOCK_PI): the releaser cannot take
  // it back, and waiters of one priority are queued in arrival order.
  return MakeCapabilities(kShmEntry.scope, kCanBlock | kCanFence | kSeesOwnerDeath |
                                              When(pi, kIsFair | kInheritsPriority));
}

class ShmMutexStore final : public StoreWithRelease<ShmKeyState> {
 public:
  explicit ShmMutexStore(std::shared_ptr<ShmSegment> segment)
      : segment_(std::move(segment)),
        futex_shows_owner_(RobustMutexFutexSelfTest().ok()) {}

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return segment_->describe(); }

  Capabilities capabilities() const override { return ShmCapabilities(segment_->pi()); }

 private:
  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  // Release() and ReleaseAsDead(): `died` leaves holder_pid set, as a holder that
  // died would, so that the next holder is told.
  absl::Status DoRelease(Key& key, bool died) override;
  absl::StatusOr<bool> IsHeld(Key& key) override {
    // A forked child has a copy of its parent's Key but not the mutex.
    const ShmKeyState* st = state(key);
    return st != nullptr && st->held && st->owner_pid == CurrentPid() &&
           StillOwnsMutex(*st);
  }
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;
  // Async waits sleep on the futex word of the slot's mutex.
  absl::StatusOr<WaitWord> GetWaitWord(Key& key) override;

  absl::StatusOr<ShmKeyState*> Bind(Key& key, Deadline deadline);
  // What Acquire() does when locking the slot did not simply succeed: true
  // once it holds the mutex after all (its last owner died), false for
  // contention, or the error.
  ABSL_ATTRIBUTE_NOINLINE absl::StatusOr<bool> OnLockFailure(const Key& key, ShmSlot& slot,
                                                              int rc, Deadline deadline);
  // Release()'s cold paths: a release from the wrong thread or process, or
  // of a lock its thread lost; and the once-a-second look at the path.
  ABSL_ATTRIBUTE_NOINLINE absl::Status RefuseRelease(const Key& key, ShmKeyState& st);
  ABSL_ATTRIBUTE_NOINLINE absl::Status LossAfterRelease(const Key& key);

  // Whether the thread that acquired through `st` still holds the slot's
  // mutex. A thread that exits holding one gives it up (the kernel walks its
  // robust list and the next locker gets EOWNERDEAD): the Key then holds
  // nothing, although it was never released. Read from the futex word,
  // which takes nothing, so the watch's thread may ask too.
  bool StillOwnsMutex(const ShmKeyState& st) const {
    return !futex_shows_owner_ || MutexOwnerTid(&st.slot->mu) == st.owner_tid;
  }
  // Whether the calling thread is the one that acquired through `st` and
  // still holds the mutex: the release's check, before it touches anything.
  // The thread handle (no system call, unlike the TID, and no TLS lookup)
  // tells the thread, the PID a forked child, and the futex word a thread
  // that exited and whose handle a new thread got.
  bool HeldByCaller(const ShmKeyState& st) const {
    if (futex_shows_owner_) {
      return st.owner_pid == CurrentPid() && SameThread(st.owner_thread, CurrentThread()) &&
             MutexOwnerTid(&st.slot->mu) == st.owner_tid;
    }
    return st.owner_pid == CurrentPid() && st.owner_tid == CurrentTid();
  }

  absl::Status Refusal(const Key& key, Loss loss) const {
    return MisuseError(
        Describe(), key.resource(),
        absl::StrCat(segment_->DescribeLoss(loss),
                     "; this store refuses new locks, since processes on a new "
                     "segment would not exclude ours. Open a new store once every "
                     "user of the old segment is gone, and run the service as a "
                     "system user or set RemoveIPC=no in logind.conf"));
  }
  absl::Status Lost(const Key& key, Loss loss) const {
    return LostError(Describe(), key.resource(),
                     absl::StrCat(segment_->DescribeLoss(loss),
                                  " while the lock was held: processes that open "
                                  "it now do not exclude us"));
  }
  absl::Status LostWithThread(const Key& key, const ShmKeyState& st) const {
    return LostError(Describe(), key.resource(),
                     absl::StrCat("the thread that acquired the lock (TID ", st.owner_tid,
                                  ") exited without releasing it; the kernel handed it "
                                  "to its next holder as an owner death"));
  }

  const std::shared_ptr<ShmSegment> segment_;
  const bool futex_shows_owner_;
};

absl::StatusOr<ShmKeyState*> ShmMutexStore::Bind(Key& key, Deadline deadline) {
  // Each first acquisition looks at the segment's path at most once a tick.
  absl::StatusOr<Loss> loss = segment_->CheckIdentityEachTick(key.resource());
  if (!loss.ok()) return loss.status();
  if (*loss != Loss::kNone) return Refusal(key, *loss);
  ShmSlotName name;
  MakeShmSlotName(key.resource(), &name);
  ShmBinding binding;
  if (FindShmBinding(*segment_, name, &binding)) {
    // Without table_mu the slot may be rebound before this count lands:
    // Acquire() then sees another generation and looks again. The count is a
    // hint either way.
    segment_->slot(binding.index).refs.fetch_add(1, std::memory_order_relaxed);
  } else {
    absl::StatusOr<ShmBinding> bound = ShmBindName(*segment_, name, deadline, key.resource());
    if (!bound.ok()) return bound.status();
    binding = *bound;
  }
  return &EnsureState(key, segment_, binding);
}

absl::StatusOr<bool> ShmMutexStore::Acquire(Key& key, LockMode, Deadline deadline) {
  // StoreCalls refuses shared locks here: this store has none.
  KeyWriter(key).MarkUnserializable();
  ShmKeyState* st = state(key);
  if (st != nullptr && st->held) {
    if (st->owner_pid == CurrentPid() && StillOwnsMutex(*st)) {
      if (st->owner_tid == CurrentTid()) return true;
    }
    if (st->owner_pid != CurrentPid() || StillOwnsMutex(*st)) {
      // The mutex belongs to another thread, or to the parent of this
      // forked process: saying "held" here would give this thread a lock
      // it lacks.
      return MisuseError(
          Describe(), key.resource(),
          absl::StrCat("this Key holds the lock for thread ", st->owner_tid,
                       st->owner_pid == CurrentPid() ? "" : " of the process it was forked from",
                       "; a shm lock belongs to the thread that acquired it"));
    }
    // Its owner thread exited holding it, and the kernel handed the mutex
    // on: this Key holds nothing and acquires anew.
    st->held = false;
  }

  for (int attempt = 0; attempt < kMaxRebinds; ++attempt) {
    if (st == nullptr) {
      absl::StatusOr<ShmKeyState*> bound = Bind(key, deadline);
      if (!bound.ok()) return bound.status();
      st = *bound;
    } else if (Loss loss = segment_->loss(); ABSL_PREDICT_FALSE(loss != Loss::kNone)) {
      // A reused Key does not look at the path itself: releases do, once a
      // second, as do first acquisitions and the watch.
      return Refusal(key, loss);
    }
    ShmSlot& slot = *st->slot;
    int rc = RobustMutexTryLock(&slot.mu);
    if (rc == EBUSY && !deadline.has_passed()) {
      // A wait, which `ipclock list` sees by its mark; an uncontended
      // acquisition pays for the try alone, as it would for the lock.
      st->wait_mark.emplace(st->segment->fd(),
                            static_cast<uint32_t>(st->slot - &st->segment->slot(0)));
      rc = RobustMutexLock(&slot.mu, ForPlatform(deadline));
      if (rc != 0 && rc != EOWNERDEAD) st->wait_mark.reset();
    }
    if (rc != 0) {
      absl::StatusOr<bool> locked = OnLockFailure(key, slot, rc, deadline);
      if (!locked.ok() || !*locked) return locked;
    }
    if (slot.generation.load(std::memory_order_relaxed) != st->generation) {
      // The slot was rebound to another name while this Key did not hold
      // it: let go and look the name up again.
      if (int err = RobustMutexUnlock(&slot.mu); err != 0) {
        return ShmMutexError(*segment_, err, key.resource(),
                             "pthread_mutex_unlock (a slot rebound to another name)");
      }
      TakeState(key);
      st = nullptr;
      continue;
    }
    const pid_t pid = CurrentPid();
    const int32_t previous_holder = slot.holder_pid;
    KeyWriter(key).set_previous_owner_died(previous_holder != 0);
    slot.holder_pid = pid;
    KeyWriter(key).set_fence(++slot.fence);
    // For listings (shm_mutex_store.h): a vDSO read of a second and two
    // stores, beside what the acquisition writes anyway.
    slot.held_since = static_cast<uint32_t>(WallClockSeconds());
    slot.held_since_pid = pid;
    // The futex word names the owner now: cheaper than asking for the TID.
    st->owner_tid = futex_shows_owner_ ? MutexOwnerTid(&slot.mu) : CurrentTid();
    st->owner_thread = CurrentThread();
    st->owner_pid = pid;
    st->held = true;
    return true;
  }
  return TransientError(Describe(), key.resource(),
                        absl::StrCat("its slot was taken for other names ", kMaxRebinds,
                                     " times in a row; the table is too small "
                                     "(raise the `capacity` DSN option)"));
}

absl::StatusOr<bool> ShmMutexStore::OnLockFailure(const Key& key, ShmSlot& slot, int rc,
                                                  Deadline deadline) {
  if (rc == EOWNERDEAD) {
    // The holder died (its holder_pid is still set and is reported by
    // Acquire()), or a binder died after trylocking the slot (holder_pid is
    // clear: nothing to report). Either way the mutex must be made
    // consistent now: unlocking it as it is would turn it into
    // ENOTRECOVERABLE for every process, forever.
    rc = RobustMutexMarkConsistent(&slot.mu);
    if (rc == 0) return true;
    // Left held by this thread (see robust_mutex.h): the kernel hands it
    // on as an owner death again when this thread exits.
    return ShmMutexError(*segment_, rc, key.resource(), "pthread_mutex_consistent");
  }
  if (rc == EBUSY) return false;
  if (rc == EDEADLK) {
    // This thread already holds the resource through another Key. It
    // cannot release while it waits here, so no wait can succeed.
    if (deadline.is_never()) {
      return MisuseError(Describe(), key.resource(),
                         "self-deadlock: this thread already holds the lock "
                         "through another Lock object, and a wait without a "
                         "timeout would never end");
    }
    MonotonicSleepUntil(ForPlatform(deadline));
    return false;
  }
  return ShmMutexError(*segment_, rc, key.resource(), "locking its slot");
}

absl::Status ShmMutexStore::DoRelease(Key& key, bool died) {
  ShmKeyState* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  // A pthread mutex may only be unlocked by the thread that locked it (glibc
  // refuses others with EPERM); holder_pid must not be touched by another
  // thread either. Check first.
  if (ABSL_PREDICT_FALSE(!HeldByCaller(*st))) return RefuseRelease(key, *st);
  ShmSlot& slot = *st->slot;
  // Cleared before the unlock: a holder that dies after this line is not
  // reported as dead, since its release had begun.
  const int32_t holder = slot.holder_pid;
  if (!died) slot.holder_pid = 0;
  if (int err = RobustMutexUnlock(&slot.mu); ABSL_PREDICT_FALSE(err != 0)) {
    // Still held, by this Key: a later acquisition through it finds it held
    // and a later release tries again.
    slot.holder_pid = holder;
    return ShmMutexError(*segment_, err, key.resource(), "pthread_mutex_unlock");
  }
  st->held = false;
  if (ABSL_PREDICT_FALSE(st->wait_mark.has_value())) st->wait_mark.reset();
  // Released either way. A lock in a segment that was removed while it was
  // held excluded nobody who opened the name since, and the caller must
  // hear of it: from any check of this store that found it, or from this
  // one, made at most once a second.
  if (ABSL_PREDICT_TRUE(segment_->IntactThisSecond())) return absl::OkStatus();
  return LossAfterRelease(key);
}

absl::Status ShmMutexStore::RefuseRelease(const Key& key, ShmKeyState& st) {
  if (st.owner_pid != CurrentPid()) {
    return MisuseError(Describe(), key.resource(),
                       "released in a process forked from the one that acquired it; "
                       "the lock stays held by that process");
  }
  if (!StillOwnsMutex(st)) {
    st.held = false;
    return LostWithThread(key, st);
  }
  return MisuseError(
      Describe(), key.resource(),
      absl::StrCat("released from thread ", CurrentTid(), " but acquired by thread ",
                   st.owner_tid,
                   "; a shm lock must be released by the thread that acquired "
                   "it. The lock stays held until that thread releases it or exits"));
}

absl::Status ShmMutexStore::LossAfterRelease(const Key& key) {
  absl::StatusOr<Loss> loss = segment_->CheckIdentityEachSecond(key.resource());
  // A path that cannot be looked at says nothing about the lock: the release
  // itself succeeded.
  if (!loss.ok() || *loss == Loss::kNone) return absl::OkStatus();
  return Lost(key, *loss);
}

absl::Status ShmMutexStore::CheckHeld(Key& key) {
  // Runs on the watch's thread too: it reads the futex word and the path,
  // and locks or unlocks nothing.
  const ShmKeyState* st = state(key);
  if (st == nullptr || !st->held || st->owner_pid != CurrentPid()) {
    return NotHeldError(Describe(), key.resource());
  }
  if (!StillOwnsMutex(*st)) return LostWithThread(key, *st);
  absl::StatusOr<Loss> loss = segment_->CheckIdentity(key.resource());
  if (!loss.ok()) return TransientError(loss.status().message());
  if (*loss != Loss::kNone) return Lost(key, *loss);
  return absl::OkStatus();
}

WatchTargets ShmMutexStore::GetWatchTargets(Key& key) {
  // Unlinking the segment changes its link count: inotify reports IN_ATTRIB
  // on the inode, which the watch then checks at once.
  WatchTargets targets;
  if (const ShmKeyState* st = state(key); st != nullptr && st->held) {
    targets.inode_fds.push_back(segment_->fd());
  }
  return targets;
}

absl::StatusOr<WaitWord> ShmMutexStore::GetWaitWord(Key& key) {
  // A lock here belongs to the thread that took it, so an async waiter
  // cannot use a helper thread: it needs the word, and must try on its own.
  if (segment_->pi()) {
    // A PI mutex is handed over by the kernel (FUTEX_UNLOCK_PI) to sleepers
    // in FUTEX_LOCK_PI only; a plain futex sleeper would never be woken.
    return MisuseError(Describe(), key.resource(),
                       "async waits are not available on segments of priority-"
                       "inheritance mutexes (pi=true or fair=true)");
  }
  if (absl::Status s = RobustMutexFutexSelfTest(); !s.ok()) {
    return MisuseError(Describe(), key.resource(),
                       s.message());
  }
  ShmKeyState* st = state(key);
  if (st == nullptr) {
    absl::StatusOr<ShmKeyState*> bound = Bind(key, Deadline::Past());
    if (!bound.ok()) return bound.status();
    st = *bound;
  }
  WaitWord w;
  w.word = MutexFutexWord(&st->slot->mu);
  w.owner_mask = kFutexTidMask;
  w.waiters_bit = kFutexWaitersBit;
  w.shared = true;
  return w;
}

}  // namespace

namespace {

absl::Status CheckShmOptions(const ShmStoreOptions& options) {
  if (!ValidShmSegmentName(options.name)) return BadShmSegmentName(options.name);
  if (options.capacity < 1 || options.capacity > kShmMaxCapacity) {
    return ConfigurationError(
        absl::StrCat("ipclock: shm://", options.name, ": capacity ", options.capacity,
                     " is out of range 1..", kShmMaxCapacity));
  }
  if ((options.mode & ~static_cast<mode_t>(0777)) != 0) {
    return ConfigurationError(absl::StrCat(
        "ipclock: shm://", options.name, ": mode must be a permission mode (0 to 0777)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewShmStore(const ShmStoreOptions& options) {
  if (absl::Status s = CheckShmOptions(options); !s.ok()) return s;
  if (absl::Status s = GuardRemoveIpc(kShmEntry, "", options.remove_ipc,
                                      absl::StrCat("shm://", options.name));
      !s.ok()) {
    return s;
  }
  // Fairness comes from the kernel's queue of a priority-inheritance mutex:
  // one kind of segment serves both options.
  ShmStoreOptions segment_options = options;
  segment_options.priority_inheritance = options.priority_inheritance || options.fair;
  absl::StatusOr<std::shared_ptr<ShmSegment>> segment = ShmSegment::Open(segment_options);
  if (!segment.ok()) return segment.status();
  return std::make_shared<ShmMutexStore>(*std::move(segment));
}

absl::Status RemoveShmSegment(absl::string_view name) {
  if (!ValidShmSegmentName(name)) return BadShmSegmentName(name);
  const ShmNames names(name);
  if (int err = ShmUnlink(names.shm_name); err != 0) {
    return ErrnoError(err, names.describe, "", absl::StrCat("shm_unlink ", names.shm_name));
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<ShmStoreOptions> ShmOptionsFromDsn(Dsn& dsn, const StoreOptions& store_options) {
  if (!dsn.has_authority() || !dsn.user().empty() || dsn.has_password() ||
      dsn.port() != 0 || !dsn.path().empty()) {
    return BadDsn(dsn, "expected shm://NAME with NAME of [A-Za-z0-9._-]{1,200}");
  }
  ShmStoreOptions options;
  options.name = dsn.host();
  if (!ValidShmSegmentName(options.name)) return BadShmSegmentName(options.name);
  if (absl::Status s = dsn.TakeModeInto("mode", &options.mode); !s.ok()) return s;
  if (absl::Status s = dsn.TakeIntInto("capacity", &options.capacity, 1, kShmMaxCapacity);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = dsn.TakeBoolInto("pi", &options.priority_inheritance); !s.ok()) return s;
  if (absl::Status s = dsn.TakeBoolInto("fair", &options.fair); !s.ok()) return s;
  if (absl::Status s = TakeRemoveIpcPolicy(dsn, store_options.remove_ipc, &options.remove_ipc);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return options;
}

Capabilities ShmCapabilitiesOf(const ShmStoreOptions& options) {
  return ShmCapabilities(options.priority_inheritance);
}

}  // namespace

const StoreDriver kShmDriver = {
    &PrepareFromOptions<&ShmOptionsFromDsn, &CheckShmOptions, &ShmCapabilitiesOf, &NewShmStore>,
    &ListShmLocks};

}  // namespace ipclock
