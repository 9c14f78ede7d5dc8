// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// SemaphoreStore: System V semaphore sets in PHP's sem_get() layout
// (stores/sysv_semaphore/sysv_semaphore_set.h), with the attachments that no Lock uses
// kept for the next one (stores/semaphore_common/semaphore_idle_cache.h). See
// include/ipclock/stores/semaphore_store.h for the contract.

#include "stores/sysv_semaphore/sysv_semaphore_store.h"

#include <sys/ipc.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/capability_flags.h"
#include "core/options_driver.h"
#include "core/removeipc_guard.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/coarse_clock.h"
#include "platform/errors.h"
#include "platform/process_id.h"
#include "platform/sysv_sem.h"
#include "stores/semaphore_common/semaphore_idle_cache.h"
#include "stores/semaphore_common/semaphore_options.h"
#include "stores/sysv_semaphore/sysv_semaphore_inspect.h"
#include "stores/sysv_semaphore/sysv_semaphore_set.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "semaphore";

// How long an idle attachment is kept at most, and how long a set id may go
// unchecked before it is used again (see SetStillOurs()).
constexpr int64_t kMaxIdleNanos = 10LL * 1000 * 1000 * 1000;
constexpr int64_t kReproveNanos = 1000LL * 1000 * 1000;

// Times the set may be removed under one acquisition before we call it a
// livelock (Symfony removes it at each release it makes).
constexpr int kMaxVanished = 10000;

// An attachment with the resource it belongs to, as the cache keeps it.
struct CachedSet {
  std::string name;
  SysvAttachment att;
  const std::string& resource() const { return name; }
};
using SetCache = SemaphoreIdleCache<CachedSet>;

void EndAll(std::vector<std::unique_ptr<CachedSet>> sets) {
  for (std::unique_ptr<CachedSet>& set : sets) DetachSet(&set->att);
}

// A Lock's use of its resource's set: the attachment.
struct SemKeyState final : CachedAttachmentState<CachedSet> {
  std::unique_ptr<CachedSet> set;

  // A Key destroyed while it holds a permit (a lock kept past its Lock
  // object) keeps its attachment for good: detaching could make us the
  // "last user" and remove the set under our own permit. SEM_UNDO ends
  // both the permit and the attachment when the process exits, and #4 then
  // reports the holder as dead, as before. A forked child's copy is its
  // parent's and is left alone.
  ~SemKeyState() override {
    if (set == nullptr || held || !set->att.attached() ||
        set->att.attach_pid != CurrentPid()) {
      return;
    }
    EndAll(GiveBack(std::move(set)));
  }
};

Capabilities SemaphoreCapabilities() {
  // Fair: the kernel performs a queued semop itself when a release makes it
  // possible, first queued first: the permit never comes free for the
  // releaser to take back (semaphore_store.h, "Fairness").
  return MakeCapabilities(kSemaphoreEntry.scope,
                          kCanBlock | kCanCount | kCanWeigh | kSeesOwnerDeath | kIsFair);
}

class SemaphoreStore final : public StoreWithRelease<SemKeyState> {
 public:
  explicit SemaphoreStore(const SemaphoreStoreOptions& options)
      : options_(options),
        cache_(std::make_shared<SetCache>(options.keep_idle, kMaxIdleNanos)) {
    describe_ = absl::StrFormat(
        "semaphore (key_scheme=%s, mode=%04o)",
        options_.key_scheme == SemaphoreKeyScheme::kMd5 ? "md5" : "xxh3",
        static_cast<unsigned>(options_.mode));
  }
  ~SemaphoreStore() override { EndAll(cache_->Drain()); }

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override { return SemaphoreCapabilities(); }

 private:
  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  // Release() and ReleaseAsDead(): `died` leaves our mark in #4, as a holder that
  // died would.
  absl::Status DoRelease(Key& key, bool died) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

  SysvContext Context(const Key& key) const { return SysvContext{describe_, key.resource()}; }
  absl::Status TakeOrAttach(const Key& key, SemKeyState* st);
  absl::Status Attach(const Key& key, CachedSet* set);
  absl::Status NotOurs(const Key& key) const {
    return ParentAcquiredError(describe_, key.resource(), "lock",
                               "only that process can release it");
  }

  const SemaphoreStoreOptions options_;
  std::string describe_;
  const std::shared_ptr<SetCache> cache_;
};

absl::Status SemaphoreStore::Attach(const Key& key, CachedSet* set) {
  if (set->att.ipc_key == 0) {
    absl::StatusOr<int32_t> ipc_key = SemaphoreIpcKey(key.resource(), options_.key_scheme);
    if (!ipc_key.ok()) return ipc_key.status();
    if (*ipc_key == IPC_PRIVATE) {
      return ConfigurationError(describe_, key.resource(),
                                "the name hashes to IPC key 0 (IPC_PRIVATE), which the "
                                "kernel never shares between processes; rename it");
    }
    set->att.ipc_key = *ipc_key;
  }
  return AttachSet(Context(key), set->att.ipc_key, options_.mode, key.permits(), &set->att);
}

// A cached attachment costs no system call; a new one costs PHP's sem_get
// protocol (semget, IPC_STAT, three semops and a few semctls).
absl::Status SemaphoreStore::TakeOrAttach(const Key& key, SemKeyState* st) {
  const SetCache::Name name = SetCache::NameOf(key.resource());
  st->resource_hash = name.hash;
  std::vector<std::unique_ptr<CachedSet>> expired;
  std::unique_ptr<CachedSet> set = cache_->Take(name, &expired);
  EndAll(std::move(expired));
  if (set != nullptr && set->att.permits != key.permits()) {
    // Verified for other permits: let AttachSet() check these against the
    // set, which refuses a mismatch.
    DetachSet(&set->att);
    set->att.semid = -1;
  }
  if (set == nullptr) {
    set = std::make_unique<CachedSet>();
    set->name = key.resource();
  }
  if (!set->att.attached()) {
    if (absl::Status s = Attach(key, set.get()); !s.ok()) return s;
  }
  st->set = std::move(set);
  return absl::OkStatus();
}

absl::StatusOr<bool> SemaphoreStore::Acquire(Key& key, LockMode mode, Deadline deadline) {
  if (mode != LockMode::kExclusive) {
    return ConfigurationError(describe_,
                              key.resource(), "SysV semaphores have no shared locks");
  }
  // SEM_UNDO ties the permit to this process.
  KeyWriter(key).MarkUnserializable();
  if (key.permits() == 0 || key.permits() > kSysvMaxPermits) {
    return ConfigurationError(describe_, key.resource(),
                              absl::StrCat("permits=", key.permits(),
                                           ": a SysV semaphore holds 1 to ", kSysvMaxPermits));
  }
  SemKeyState* st = &EnsureState(key);
  if (st->held) return true;
  if (st->cache == nullptr) st->cache = cache_;
  if (st->set != nullptr && st->set->att.attach_pid != CurrentPid()) {
    // Forked since the attachment: it is the parent's (see SysvAttachment).
    st->set.reset();
  }
  // Caveat: the set id is kept between acquisitions, and only our count in
  // #1 keeps an ipclock peer from removing the set. Symfony, ipcrm and
  // RemoveIPC remove it anyway; our next semop then fails with EINVAL and we
  // attach to whatever set the key leads to now. An id left unused for a
  // second is checked first (IPC_STAT), so that an id the kernel has given
  // to another set since is never used.
  const SysvContext ctx = Context(key);
  for (int vanished = 0; vanished < kMaxVanished; ++vanished) {
    if (st->set == nullptr) {
      if (absl::Status s = TakeOrAttach(key, st); !s.ok()) return s;
    }
    SysvAttachment& att = st->set->att;
    if (!att.attached()) {
      if (absl::Status s = Attach(key, st->set.get()); !s.ok()) return s;
    } else if (const int64_t now = CoarseMonotonicNanos(); now - att.proven_at > kReproveNanos) {
      if (!SetStillOurs(att)) {
        att.semid = -1;  // removed: our count and undo records went with it
        continue;
      }
      att.proven_at = now;
    }
    bool died = false;
    // Only the first pass follows the Lock's try; after a removed set, try.
    const bool tried = key.tried_just_now() && vanished == 0;
    att.weight = key.weight();
    absl::StatusOr<SysvStep> step = AcquirePermit(ctx, &att, deadline, tried, &died);
    // Busy or failed, the attachment stays for the next try.
    if (!step.ok()) return step.status();
    if (*step == SysvStep::kGone) {
      // Removed while we waited (Symfony's release does that): start over
      // on the set the key leads to now.
      att.semid = -1;
      continue;
    }
    if (*step == SysvStep::kBusy) return false;
    st->held = true;
    KeyWriter(key).set_previous_owner_died(died);
    return true;
  }
  return TransientError(describe_, key.resource(),
                        absl::StrCat("the semaphore set was removed ", kMaxVanished,
                                     " times in a row while we waited for it"));
}

absl::Status SemaphoreStore::DoRelease(Key& key, bool died) {
  SemKeyState* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  if (st->set->att.attach_pid != CurrentPid()) return NotOurs(key);
  st->held = false;
  if (!st->loss.ok()) {
    AbandonLostPermit(&st->set->att);
    return std::exchange(st->loss, absl::OkStatus());
  }
  // The attachment stays until the Key is destroyed.
  return ReleasePermit(Context(key), &st->set->att, died);
}

absl::StatusOr<bool> SemaphoreStore::IsHeld(Key& key) {
  SemKeyState* st = state(key);
  if (st == nullptr || !st->held || st->set->att.attach_pid != CurrentPid()) return false;
  return HeldUnlessLost(CheckSetHeld(Context(key), st->set->att));
}

// One IPC_STAT and one GETALL. SysV sets give no notification of removal
// (no descriptor, no inotify): the watch on held locks runs the probe below
// every 50 ms, and this at its interval.
absl::Status SemaphoreStore::CheckHeld(Key& key) {
  SemKeyState* st = state(key);
  if (st == nullptr || !st->held) {
    return NotHeldError(describe_, key.resource());
  }
  if (st->set->att.attach_pid != CurrentPid()) return NotOurs(key);
  absl::Status held = CheckSetHeld(Context(key), st->set->att);
  if (absl::IsAborted(held)) st->loss = held;
  return held;
}

// One GETVAL of the lock semaphore: EINVAL or EIDRM once the set is removed
// (`ipcrm -s`, RemoveIPC), and as many free permits as the set has while we
// hold one once it is reset (SETVAL). A set whose id came to name another
// set (after the kernel's counters wrapped) is the interval check's.
class SysvSetProbe final : public WatchProbe {
 public:
  SysvSetProbe(int semid, uint32_t permits, uint32_t weight)
      : semid_(semid), most_free_(static_cast<int>(permits - weight)) {}
  bool Changed() override {
    int free = 0;
    return SysvGetVal(semid_, kSysvLockSem, &free) != 0 || free > most_free_;
  }

 private:
  const int semid_;
  // More free permits than this while we hold ours: the set was reset.
  const int most_free_;
};

WatchTargets SemaphoreStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  const SemKeyState* st = state(key);
  if (st != nullptr && st->held && st->set->att.attach_pid == CurrentPid()) {
    targets.probe = std::make_shared<SysvSetProbe>(st->set->att.semid, st->set->att.permits,
                                                   st->set->att.weight);
  }
  return targets;
}

}  // namespace

namespace {

absl::Status CheckSemaphoreOptions(const SemaphoreStoreOptions& options) {
  if (absl::Status s = CheckCommonSemaphoreOptions(kName, options); !s.ok()) return s;
  if (options.key_scheme == SemaphoreKeyScheme::kXxh3) {
    // Refuse now rather than at the first lock.
    absl::StatusOr<int32_t> probe = SemaphoreIpcKey("x", options.key_scheme);
    if (!probe.ok()) return probe.status();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewSemaphoreStore(
    const SemaphoreStoreOptions& options) {
  if (absl::Status s = CheckSemaphoreOptions(options); !s.ok()) return s;
  if (absl::Status s = GuardRemoveIpc(kSemaphoreEntry, "", options.remove_ipc, kName);
      !s.ok()) {
    return s;
  }
  return std::shared_ptr<Store>(std::make_shared<SemaphoreStore>(options));
}

namespace {

absl::StatusOr<SemaphoreStoreOptions> SemaphoreOptionsFromDsn(Dsn& dsn,
                                                              const StoreOptions& store_options) {
  if (dsn.has_authority() || !dsn.path().empty()) {
    return BadDsn(dsn, "semaphore takes no address, only options (semaphore:?mode=0666)");
  }
  SemaphoreStoreOptions options;
  absl::Status key_scheme = dsn.TakeChoiceInto(
      "key_scheme", {{"md5", SemaphoreKeyScheme::kMd5}, {"xxh3", SemaphoreKeyScheme::kXxh3}},
      &options.key_scheme, "md5 (Symfony up to 6.2) or xxh3 (Symfony 6.3 and later)");
  if (!key_scheme.ok()) return key_scheme;
  if (absl::Status s = TakeCommonSemaphoreOptions(dsn, store_options, &options); !s.ok()) {
    return s;
  }
  // Accepted, so that `fair=true` can be given to every local store; the
  // kernel's queue is fair either way (semaphore_store.h).
  if (absl::StatusOr<bool> fair = dsn.TakeBool("fair", true); !fair.ok()) {
    return fair.status();
  }
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return options;
}

}  // namespace

const StoreDriver kSemaphoreDriver = {
    &PrepareFromOptions<&SemaphoreOptionsFromDsn, &CheckSemaphoreOptions, &SemaphoreCapabilities,
                        &NewSemaphoreStore>,
    &ListSemaphoreLocks};

}  // namespace ipclock
