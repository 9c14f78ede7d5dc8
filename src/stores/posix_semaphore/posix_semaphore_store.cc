// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// PosixSemaphoreStore: a registry of holders per resource, which says who
// holds the permits, plus a named semaphore on which its waiters sleep
// (stores/posix_semaphore/posix_semaphore_registry.h), with the attachments that no Lock
// uses kept for the next one (stores/semaphore_common/semaphore_idle_cache.h). See
// include/ipclock/stores/posix_semaphore_store.h for the contract.

#include "stores/posix_semaphore/posix_semaphore_store.h"

#include <errno.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "core/capability_flags.h"
#include "core/hashing.h"
#include "core/options_driver.h"
#include "core/removeipc_guard.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/coarse_clock.h"
#include "platform/errors.h"
#include "platform/posix_sem.h"
#include "platform/process_id.h"
#include "stores/posix_semaphore/posix_semaphore_registry.h"
#include "stores/posix_semaphore/posix_semaphore_inspect.h"
#include "stores/semaphore_common/semaphore_idle_cache.h"
#include "stores/semaphore_common/semaphore_options.h"
#include "stores/ticket_queue/ticket_queue.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "posix-semaphore";

// How long a waiter sleeps at most before it looks at the registry again:
// the bound on how late a dead holder's permit, or one whose wake-up was
// lost, comes back while someone waits.
constexpr int64_t kReclaimSliceNanos = 200 * 1000 * 1000;

// Registries unlinked under a held permit before we give up.
constexpr int kMaxReattach = 64;

// How long an idle attachment is kept at most, and how long the registry's
// link may go unchecked at an acquisition or a release (see the header).
constexpr int64_t kMaxIdleNanos = 10LL * 1000 * 1000 * 1000;
constexpr int64_t kLinkCheckNanos = 10LL * 1000 * 1000;

using RegistryCache = SemaphoreIdleCache<SemaphoreRegistry>;

void DetachAll(std::vector<std::unique_ptr<SemaphoreRegistry>> registries) {
  // Errors go unreported: there is nobody to tell, and what a failed Detach
  // leaves (a taken slot) is reclaimed once this process is gone.
  for (std::unique_ptr<SemaphoreRegistry>& r : registries) r->Detach().IgnoreError();
}

// A Lock's attachment: a registry slot and the mapped semaphore.
struct PosixKeyState final : CachedAttachmentState<SemaphoreRegistry> {
  std::unique_ptr<SemaphoreRegistry> registry;
  // The semaphore, opened for the watch on held locks while it watches.
  ScopedFd semaphore_watched;

  // A Key destroyed while it holds a permit (a lock kept past its Lock
  // object) keeps its slot, which keeps the permit held until this process
  // dies; the registry's destructor only unmaps. So does a forked child's
  // copy of its parent's attachment.
  ~PosixKeyState() override {
    if (registry == nullptr || held || registry->attach_pid() != CurrentPid()) return;
    DetachAll(GiveBack(std::move(registry)));
  }
};

bool ValidPrefix(absl::string_view prefix) {
  if (prefix.empty() || prefix.size() > 64) return false;
  for (char c : prefix) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Capabilities PosixSemaphoreCapabilities(const PosixSemaphoreStoreOptions& options) {
  return MakeCapabilities(kPosixSemaphoreEntry.scope, kCanBlock | kCanCount | kSeesOwnerDeath |
                                                         When(options.fair, kIsFair | kCanCancel));
}

class PosixSemaphoreStore final : public StoreWithRelease<PosixKeyState> {
 public:
  explicit PosixSemaphoreStore(const PosixSemaphoreStoreOptions& options)
      : options_(options),
        cache_(std::make_shared<RegistryCache>(options.keep_idle, kMaxIdleNanos)) {
    describe_ = absl::StrFormat("posix-semaphore (prefix=%s, mode=%04o)",
                                options_.prefix,
                                static_cast<unsigned>(options_.mode));
  }
  ~PosixSemaphoreStore() override { DetachAll(cache_->Drain()); }

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override { return PosixSemaphoreCapabilities(options_); }

 private:
  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  // Release() and ReleaseAsDead(): `died` gives the permit back as the permit of
  // a dead holder, whose next holder is told.
  absl::Status DoRelease(Key& key, bool died) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

  SemaphoreRegistry::Names NamesOf(const Key& key) const {
    SemaphoreRegistry::Names names;
    names.semaphore = PosixSemaphoreName(key.resource(), options_.prefix);
    names.registry = absl::StrCat(names.semaphore, ".reg");
    return names;
  }
  absl::StatusOr<std::unique_ptr<SemaphoreRegistry>> TakeOrAttach(const Key& key,
                                                                   size_t* resource_hash);
  // True once a permit is taken, false when `deadline` passed first.
  // `*waited` says whether it slept. `tried_just_now`: a try found none
  // free a moment ago, so a wait begins by sleeping.
  absl::StatusOr<bool> TakePermit(const Key& key, SemaphoreRegistry* registry,
                                  Deadline deadline, bool tried_just_now,
                                  bool* previous_owner_died, bool* waited);
  absl::Status NotOurs(const Key& key) const {
    return ParentAcquiredError(describe_, key.resource(), "lock",
                               "only that process can release it");
  }

  const PosixSemaphoreStoreOptions options_;
  std::string describe_;
  const std::shared_ptr<RegistryCache> cache_;
};

absl::StatusOr<std::unique_ptr<SemaphoreRegistry>> PosixSemaphoreStore::TakeOrAttach(
    const Key& key, size_t* resource_hash) {
  const RegistryCache::Name name = RegistryCache::NameOf(key.resource());
  *resource_hash = name.hash;
  std::vector<std::unique_ptr<SemaphoreRegistry>> expired;
  std::unique_ptr<SemaphoreRegistry> registry = cache_->Take(name, &expired);
  DetachAll(std::move(expired));
  if (registry != nullptr && registry->permits() == key.permits()) return registry;
  if (registry != nullptr) {
    // Made for other permits: Attach() below refuses the mismatch with the
    // message that explains it.
    registry->Detach().IgnoreError();
  }
  return SemaphoreRegistry::Attach(NamesOf(key), options_.mode, key.permits(), options_.fair,
                                   describe_, key.resource());
}

absl::StatusOr<bool> PosixSemaphoreStore::TakePermit(const Key& key,
                                                     SemaphoreRegistry* registry,
                                                     Deadline deadline,
                                                     bool tried_just_now,
                                                     bool* previous_owner_died,
                                                     bool* waited) {
  *waited = false;
  bool woken = false;
  // Our slot says that we wait from the first wait on (for listings), and
  // no longer once this returns, however it does.
  struct Waiting {
    SemaphoreRegistry* registry;
    bool marked = false;
    void Begin() {
      if (!marked) registry->MarkWaiting(true);
      marked = true;
    }
    ~Waiting() {
      if (marked) registry->MarkWaiting(false);
    }
  } waiting{registry};
  // A fair registry's waiters take turns in its queue (ticket_queue.h):
  // only the first of them sleeps on the semaphore, and nobody takes a
  // permit while someone queues. The place passes its turn on when it goes.
  std::optional<TicketQueue> queue;
  if (TicketQueueShared* words = registry->queue()) queue.emplace(words);
  std::optional<QueuePlace> place;
  if (queue && !queue->Empty()) {
    if (deadline.has_passed()) return false;
    *waited = true;
    waiting.Begin();
    place.emplace(*queue);
    if (!place->AwaitTurn(deadline, &key)) return false;
  }
  // A wait that follows a try of the Lock's (Key::tried_just_now()) begins
  // with its wait: that try looked a moment ago, and a post since wakes us.
  bool skip_try = tried_just_now && !place && !deadline.has_passed();
  for (;;) {
    // The registry decides; a post only says that it is worth looking. It
    // also reclaims a dead holder's permit when none is free, so every try
    // and every slice of a wait looks for one.
    if (!std::exchange(skip_try, false)) {
      absl::StatusOr<bool> got = registry->TryAcquire(woken, previous_owner_died);
      if (!got.ok() || *got) return got;
    }
    // A fair store's wait watches the canceller (a signal's EINTR ends the
    // slice); the others' waits are sliced by Lock.
    if (deadline.has_passed() || (queue && key.cancelled())) return false;
    if (queue && !place) {
      // About to wait: behind whoever queued since our look, if anyone.
      *waited = true;
      waiting.Begin();
      place.emplace(*queue);
      if (!place->AwaitTurn(deadline, &key)) return false;
      woken = false;
      continue;
    }
    // Slices bound how late a dead holder's permit, or a permit whose post
    // was lost with a killed process, reaches a waiter.
    *waited = true;
    waiting.Begin();
    const int64_t slice_end =
        std::min(deadline.monotonic_nanos(), Deadline::NowNanos() + kReclaimSliceNanos);
    const int err = SemClockWait(registry->semaphore(), slice_end);
    woken = err == 0;
    if (err != 0 && err != ETIMEDOUT && err != EINTR) {
      return ErrnoError(err, describe_, key.resource(), "sem_clockwait");
    }
  }
}

absl::StatusOr<bool> PosixSemaphoreStore::Acquire(Key& key, LockMode mode,
                                               Deadline deadline) {
  if (mode != LockMode::kExclusive) {
    return ConfigurationError(describe_,
                              key.resource(), "POSIX semaphores have no shared locks");
  }
  // The registry names this process as the holder.
  KeyWriter(key).MarkUnserializable();
  if (key.permits() == 0 || key.permits() > kRegistrySlots) {
    return ConfigurationError(describe_, key.resource(),
                              absl::StrCat("permits=", key.permits(), ": expected 1 to ",
                                           kRegistrySlots, " (one registry slot per holder)"));
  }
  PosixKeyState* st = &EnsureState(key);
  if (st->held) return true;
  if (st->cache == nullptr) st->cache = cache_;
  if (st->registry != nullptr && st->registry->attach_pid() != CurrentPid()) {
    // Forked since the attachment: the slot is the parent's. Unmap our copy
    // and take a slot of our own.
    st->registry.reset();
  }
  for (int attempt = 0; attempt < kMaxReattach; ++attempt) {
    if (st->registry == nullptr) {
      absl::StatusOr<std::unique_ptr<SemaphoreRegistry>> attached =
          TakeOrAttach(key, &st->resource_hash);
      if (!attached.ok()) return attached.status();
      st->registry = *std::move(attached);
    }
    SemaphoreRegistry* registry = st->registry.get();
    bool died = false;
    bool waited = false;
    absl::StatusOr<bool> got = TakePermit(key, registry, deadline,
                                          key.tried_just_now() && attempt == 0, &died, &waited);
    if (!got.ok() && !registry->SlotStillOurs()) {
      // Someone rewrote the page and took our slot: attach afresh. The old
      // slot is not ours to free.
      st->registry.reset();
      continue;
    }
    // Busy or failed, the slot stays for the next try and ends with the Key.
    if (!got.ok()) return got.status();
    if (!*got) return false;
    // Is the registry still linked? Someone may have deleted the pair (a
    // cleaner, RemoveIPC) while we waited or since we last looked: a permit
    // in it excludes nobody who attaches from now on. Checked after a wait
    // and whenever the last check is older than kLinkCheckNanos.
    const int64_t now = CoarseMonotonicNanos();
    if (waited || now - registry->link_checked_at() > kLinkCheckNanos) {
      if (!registry->StillLinked()) {
        // Give the worthless permit up and start over on the objects the
        // names lead to now.
        registry->Detach().IgnoreError();
        st->registry.reset();
        continue;
      }
      registry->set_link_checked_at(now);
    }
    KeyWriter(key).set_previous_owner_died(died);
    st->held = true;
    return true;
  }
  return TransientError(describe_, key.resource(),
                        absl::StrCat("the semaphore's registry was deleted ",
                                     kMaxReattach, " times while we waited"));
}

absl::Status PosixSemaphoreStore::DoRelease(Key& key, bool died) {
  PosixKeyState* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  SemaphoreRegistry* registry = st->registry.get();
  if (registry->attach_pid() != CurrentPid()) return NotOurs(key);
  st->held = false;
  st->semaphore_watched = ScopedFd();
  // Given back even in a registry found lost: waiters that still sleep on
  // it wake up and find it unlinked.
  absl::Status released = registry->ReleasePermit(died);
  const int64_t now = CoarseMonotonicNanos();
  if (!st->loss.ok()) {
    released = std::exchange(st->loss, absl::OkStatus());
  } else if (released.ok() && now - registry->link_checked_at() > kLinkCheckNanos) {
    if (!registry->StillLinked()) {
      released = LostError(describe_, key.resource(),
                           absl::StrCat("the registry /dev/shm", NamesOf(key).registry,
                                        " was deleted while the lock was held"));
    }
    registry->set_link_checked_at(now);
  }
  if (absl::IsAborted(released)) {
    // A worthless attachment: the next acquisition makes a new one.
    registry->Detach().IgnoreError();
    st->registry.reset();
  }
  return released;
}

absl::StatusOr<bool> PosixSemaphoreStore::IsHeld(Key& key) {
  PosixKeyState* st = state(key);
  if (st == nullptr || !st->held || st->registry->attach_pid() != CurrentPid()) return false;
  return HeldUnlessLost(st->registry->CheckHeld());
}

absl::Status PosixSemaphoreStore::CheckHeld(Key& key) {
  PosixKeyState* st = state(key);
  if (st == nullptr || !st->held) {
    return NotHeldError(describe_, key.resource());
  }
  if (st->registry->attach_pid() != CurrentPid()) return NotOurs(key);
  absl::Status s = st->registry->CheckHeld();
  if (s.ok()) st->registry->set_link_checked_at(CoarseMonotonicNanos());
  if (absl::IsAborted(s)) st->loss = s;
  return s;
}

// The registry's and the semaphore's inodes: inotify reports the unlinking
// of either at once (a replacement begins with one). A registry rewritten
// in place is seen at the watch's interval check.
WatchTargets PosixSemaphoreStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  PosixKeyState* st = state(key);
  if (st != nullptr && st->held && st->registry->attach_pid() == CurrentPid()) {
    targets.inode_fds.push_back(st->registry->registry_fd());
    if (!st->semaphore_watched.valid()) {
      st->semaphore_watched = st->registry->OpenSemaphoreToWatch();
    }
    if (st->semaphore_watched.valid()) targets.inode_fds.push_back(st->semaphore_watched.get());
  }
  return targets;
}

}  // namespace

std::string PosixSemaphoreName(absl::string_view resource, absl::string_view prefix) {
  Sha256Digest d = Sha256(resource);
  std::array<uint8_t, 16> head;
  std::copy(d.begin(), d.begin() + 16, head.begin());
  return absl::StrCat("/", prefix, ".", ToHex(head));
}

namespace {

absl::Status CheckPosixSemaphoreOptions(const PosixSemaphoreStoreOptions& options) {
  if (absl::Status s = CheckCommonSemaphoreOptions(kName, options); !s.ok()) return s;
  if (!ValidPrefix(options.prefix)) {
    return ConfigurationError(absl::StrCat(
        "posix-semaphore: prefix \"", absl::CHexEscape(options.prefix),
        "\": expected 1 to 64 of [A-Za-z0-9._-] (no '/': a name has one, "
        "at its start)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewPosixSemaphoreStore(
    const PosixSemaphoreStoreOptions& options) {
  if (absl::Status s = CheckPosixSemaphoreOptions(options); !s.ok()) return s;
  if (absl::Status s = GuardRemoveIpc(kPosixSemaphoreEntry, "", options.remove_ipc,
                                      "posix-semaphore");
      !s.ok()) {
    return s;
  }
  return std::shared_ptr<Store>(std::make_shared<PosixSemaphoreStore>(options));
}

namespace {

absl::StatusOr<PosixSemaphoreStoreOptions> PosixSemaphoreOptionsFromDsn(
    Dsn& dsn, const StoreOptions& store_options) {
  if (dsn.has_authority() || !dsn.path().empty()) {
    return BadDsn(dsn, "posix-semaphore takes no address, only options "
                       "(posix-semaphore:?prefix=myapp&mode=0666)");
  }
  PosixSemaphoreStoreOptions options;
  if (std::optional<std::string> prefix = dsn.TakeOption("prefix")) {
    options.prefix = *prefix;
  }
  if (absl::Status s = TakeCommonSemaphoreOptions(dsn, store_options, &options); !s.ok()) {
    return s;
  }
  if (absl::Status s = dsn.TakeBoolInto("fair", &options.fair); !s.ok()) return s;
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return options;
}

}  // namespace

const StoreDriver kPosixSemaphoreDriver = {
    &PrepareFromOptions<&PosixSemaphoreOptionsFromDsn, &CheckPosixSemaphoreOptions,
                        &PosixSemaphoreCapabilities, &NewPosixSemaphoreStore>,
    &ListPosixSemaphoreLocks};

}  // namespace ipclock
