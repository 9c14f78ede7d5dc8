// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Counting semaphores of slot locks (include/ipclock/stores/slot_semaphore_store.h):
// a key of permits N holds `weight` of the slot store's locks R_0..R_{N-1}.
//
// Every slot key lives in this store's state in the semaphore's key, made
// once per slot and kept between acquisitions, so that a slot store's
// reused handle (flock's open file, shm's slot) stays warm, as a reused
// Lock's does.

#include "ipclock/stores/slot_semaphore_store.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/backoff.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/process_id.h"
#include "platform/random.h"

namespace ipclock {
namespace {

constexpr absl::string_view kSeparator = "_";

struct SlotState final : KeyState {
  // By slot index; made at first use.
  std::vector<std::optional<Key>> keys;
  // The slots held, ascending.
  absl::InlinedVector<uint32_t, 4> held;
  // Every slot key is made and shares the semaphore's canceller.
  bool ready = false;
  // The lease the Lock asked for, on expiring slot stores: each slot's
  // starts when that slot is tried, as a lock's starts when it is tried.
  std::optional<absl::Duration> lease;
};

// Where a try starts looking: a xorshift draw, seeded from getrandom(2)
// once per thread and again in a forked child, so that a try costs no
// system call and parent and child do not draw alike.
uint32_t RandomStart(uint32_t permits) {
  thread_local uint64_t state = 0;
  thread_local pid_t seeded_in = 0;
  if (state == 0 || seeded_in != CurrentPid()) {
    seeded_in = CurrentPid();
    if (!FillRandom(&state, sizeof state).ok() || state == 0) {
      state = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(seeded_in);
    }
  }
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return static_cast<uint32_t>(state % permits);
}

// Any probe changed: the watch then checks every slot.
class EitherProbe final : public WatchProbe {
 public:
  explicit EitherProbe(std::vector<std::shared_ptr<WatchProbe>> probes)
      : probes_(std::move(probes)) {}
  bool Changed() override {
    bool changed = false;
    for (const auto& p : probes_) changed = p->Changed() || changed;
    return changed;
  }

 private:
  std::vector<std::shared_ptr<WatchProbe>> probes_;
};

class SlotSemaphoreStore final : public StoreWithState<SlotState> {
 public:
  explicit SlotSemaphoreStore(std::shared_ptr<Store> slots)
      : slots_(std::move(slots)), slot_caps_(slots_->capabilities()) {
    caps_ = slot_caps_;
    caps_.counting = true;
    caps_.weighted = true;
    caps_.shared = false;
    caps_.serializable = false;
    caps_.fair = false;
    caps_.priority_inheritance = false;
    describe_ = absl::StrCat(slots_->Describe(), " (slot semaphore)");
    SetDiagnosticSink(slots_->diagnostic_sink());
    SetMetricsMode(slots_->metrics_mode());
  }

  // Not the slot store's name: helpers that take a Lock of a given kind
  // (FlockDescriptorOf(), EtcdHeldKeyOf()) tell its store's class by it.
  absl::string_view name() const override { return "slot-semaphore"; }
  std::string Describe() const override { return describe_; }
  Capabilities capabilities() const override { return caps_; }

 private:
  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override {
    if (mode != LockMode::kExclusive) {
      return ConfigurationError(describe_, key.resource(), "a semaphore has no shared mode");
    }
    SlotState& st = EnsureState(key);
    if (!st.held.empty()) return true;  // already ours
    if (absl::Status s = MakeSlotKeys(key, st); !s.ok()) return s;
    st.lease.reset();
    if (slot_caps_.expiring && key.expiry().has_value()) st.lease = key.expiry()->Remaining();
    const uint32_t weight = key.weight();
    absl::StatusOr<bool> got = TryFromRandomStart(key, st, weight);
    if (!got.ok() || *got || deadline.has_passed()) return Finish(key, st, got);
    if (weight == 1) {
      // No one slot is the one to wait for: ask again after a backoff.
      Backoff backoff(absl::Milliseconds(1), absl::Milliseconds(50));
      while (true) {
        if (key.cancelled()) return false;
        backoff.Sleep(deadline, key.cancel_fd());
        got = TryFromRandomStart(key, st, weight);
        if (!got.ok() || *got || deadline.has_passed()) return Finish(key, st, got);
      }
    }
    // A blocking slot store hands a released slot to the waiter on it: a
    // wait on each slot in turn keeps what it gets. A polling one hands it
    // to whoever asks first, so the waiter asks for every slot as often as
    // the lighter waiters do.
    return Finish(key, st,
                  slot_caps_.blocking ? Reserve(key, st, weight, deadline)
                                      : Gather(key, st, weight, deadline));
  }

  // Gives every slot key the semaphore's canceller, making those not made
  // yet.
  absl::Status MakeSlotKeys(Key& key, SlotState& st) {
    const uint32_t permits = key.permits();
    if (st.ready && st.keys.size() == permits) return absl::OkStatus();
    if (st.keys.size() != permits) {
      st.keys.clear();
      st.keys.resize(permits);
    }
    for (uint32_t i = 0; i < permits; ++i) {
      if (!st.keys[i].has_value()) {
        // The semaphore's name was checked against its own limit: the
        // slot's suffix does not count against it.
        KeyOptions options;
        options.max_resource_bytes = key.resource().size() + 16;
        absl::StatusOr<Key> slot = Key::Create(SemaphoreSlotName(key.resource(), i), options);
        if (!slot.ok()) return Restated(slot.status(), describe_, key.resource(), "slot key");
        st.keys[i].emplace(*std::move(slot));
      }
      KeyWriter(*st.keys[i]).ShareCanceller(key);
    }
    st.ready = true;
    return absl::OkStatus();
  }

  // Takes `weight` free slots from a random one on, without waiting; gives
  // back what it took unless it got them all.
  absl::StatusOr<bool> TryFromRandomStart(Key& key, SlotState& st, uint32_t weight) {
    const uint32_t permits = static_cast<uint32_t>(st.keys.size());
    const uint32_t start = permits > 1 ? RandomStart(permits) : 0;
    for (uint32_t i = 0; i < permits && st.held.size() < weight; ++i) {
      const uint32_t slot = (start + i) % permits;
      StartLease(st, *st.keys[slot]);
      absl::StatusOr<bool> got = StoreCalls::Acquire(*slots_, slot_caps_, *st.keys[slot],
                                                     LockMode::kExclusive, Deadline::Past());
      if (!got.ok()) {
        GiveBack(st);
        return got.status();
      }
      if (*got) Note(st, slot);
    }
    if (st.held.size() == weight) return true;
    GiveBack(st);
    (void)key;
    return false;
  }

  // Takes slots 0, 1, ... in order, waiting on each, keeping what it took,
  // until it holds `weight`; at the deadline gives all back. It waits on a
  // slot in slices (10 ms doubling to 200 ms; on expiring slot stores at
  // most a third of the lease, extending the slots it keeps between them,
  // or they would expire while it waits), and between slices takes the
  // rest of its weight from any free slots if enough are free, or none of
  // them: a weight-2 waiter behind a long weight-1 holder of slot 0 need
  // not wait for it while two other slots are free. Only slots taken in
  // order are ever waited on, so two waiters never hold what the other
  // waits for.
  absl::StatusOr<bool> Reserve(Key& key, SlotState& st, uint32_t weight, Deadline deadline) {
    const uint32_t permits = static_cast<uint32_t>(st.keys.size());
    absl::Duration look_around = absl::Milliseconds(10);
    for (uint32_t slot = 0; slot < permits && st.held.size() < weight; ++slot) {
      for (;;) {
        Deadline slice = std::min(deadline, Deadline::In(look_around));
        if (st.lease) slice = std::min(slice, Deadline::In(*st.lease / 3));
        look_around = std::min(look_around * 2, absl::Milliseconds(200));
        StartLease(st, *st.keys[slot]);
        absl::StatusOr<bool> got = StoreCalls::Acquire(*slots_, slot_caps_, *st.keys[slot],
                                                       LockMode::kExclusive, slice);
        if (got.ok() && *got) break;
        if (!got.ok() || slice == deadline || key.cancelled()) {
          GiveBack(st);
          return got;
        }
        if (absl::Status s = ExtendKept(st); !s.ok()) return s;
        absl::StatusOr<bool> rest = TakeRestIfFree(st, weight, slot);
        if (!rest.ok() || *rest) return rest;
      }
      Note(st, slot);
    }
    if (st.held.size() == weight) return true;
    GiveBack(st);
    (void)key;
    return false;
  }

  // Tries slots `from` and above that `st` does not hold, without waiting:
  // true once `st` holds `weight`; otherwise gives back what this took.
  absl::StatusOr<bool> TakeRestIfFree(SlotState& st, uint32_t weight, uint32_t from) {
    std::vector<uint32_t> taken;
    const uint32_t permits = static_cast<uint32_t>(st.keys.size());
    for (uint32_t slot = from; slot < permits && st.held.size() + taken.size() < weight; ++slot) {
      if (std::find(st.held.begin(), st.held.end(), slot) != st.held.end()) continue;
      StartLease(st, *st.keys[slot]);
      absl::StatusOr<bool> got = StoreCalls::Acquire(*slots_, slot_caps_, *st.keys[slot],
                                                     LockMode::kExclusive, Deadline::Past());
      if (!got.ok()) {
        ReleaseSlots(st, taken);
        GiveBack(st);
        return got.status();
      }
      if (*got) taken.push_back(slot);
    }
    if (st.held.size() + taken.size() == weight) {
      for (uint32_t slot : taken) Note(st, slot);
      return true;
    }
    ReleaseSlots(st, taken);
    return false;
  }

  // A wait of weight > 1 on a polling slot store: takes any free slot,
  // keeping what it took, trying every slot it lacks after a backoff (1 ms
  // doubling to 50 ms, as a weight-1 wait), until it holds `weight`. Two
  // such waiters could each keep some and wait for the rest forever: one
  // that takes nothing within its slice (200 ms, doubling every round)
  // gives back what it kept and starts again; a slice that outlasts the
  // lighter holders' hold gets all it needs, so they cannot keep it out.
  // Leases of the slots it keeps are extended every third of the lease.
  absl::StatusOr<bool> Gather(Key& key, SlotState& st, uint32_t weight, Deadline deadline) {
    const uint32_t permits = static_cast<uint32_t>(st.keys.size());
    Backoff backoff(absl::Milliseconds(1), absl::Milliseconds(50));
    absl::Duration slice = absl::Milliseconds(200 + CurrentPid() % 50);
    int64_t progress_at = Deadline::NowNanos();
    int64_t extended_at = progress_at;
    for (;;) {
      for (uint32_t slot = 0; slot < permits && st.held.size() < weight; ++slot) {
        if (std::find(st.held.begin(), st.held.end(), slot) != st.held.end()) continue;
        StartLease(st, *st.keys[slot]);
        absl::StatusOr<bool> got = StoreCalls::Acquire(*slots_, slot_caps_, *st.keys[slot],
                                                       LockMode::kExclusive, Deadline::Past());
        if (!got.ok()) {
          GiveBack(st);
          return got.status();
        }
        if (*got) {
          Note(st, slot);
          progress_at = Deadline::NowNanos();
          // Asks again soon: the next slot may come free as soon.
          backoff = Backoff(absl::Milliseconds(1), absl::Milliseconds(50));
        }
      }
      if (st.held.size() == weight) return true;
      if (deadline.has_passed() || key.cancelled()) {
        GiveBack(st);
        return false;
      }
      const int64_t now = Deadline::NowNanos();
      if (!st.held.empty() && absl::Nanoseconds(now - progress_at) > slice) {
        GiveBack(st);
        slice = slice * 2;
        progress_at = now;
      } else if (st.lease && absl::Nanoseconds(now - extended_at) > *st.lease / 3) {
        if (absl::Status s = ExtendKept(st); !s.ok()) return s;
        extended_at = now;
      }
      backoff.Sleep(deadline, key.cancel_fd());
    }
  }

  // Extends one slot's lease to `ttl` from now, its key's with it.
  absl::Status ExtendSlot(Key& slot, absl::Duration ttl) {
    KeyWriter w(slot);
    w.ResetLifetime();
    w.ReduceLifetime(ttl);
    return StoreCalls::Extend(*slots_, slot, ttl);
  }

  // While a wait keeps some slots and waits for more: extends the slots
  // kept; if one of them was lost, gives every one back.
  absl::Status ExtendKept(SlotState& st) {
    for (uint32_t kept : st.held) {
      if (absl::Status s = ExtendSlot(*st.keys[kept], *st.lease); !s.ok()) {
        GiveBack(st);
        return s;
      }
    }
    return absl::OkStatus();
  }

  // A slot's lease starts now, as the Lock's did when it was tried.
  static void StartLease(const SlotState& st, Key& slot) {
    if (!st.lease) return;
    KeyWriter w(slot);
    w.ResetLifetime();
    w.ReduceLifetime(*st.lease);
  }

  static void Note(SlotState& st, uint32_t slot) {
    st.held.insert(std::upper_bound(st.held.begin(), st.held.end(), slot), slot);
  }

  // Releases the slots taken by a try or a wait that did not get them all.
  // A slot whose previous holder died goes back as a dead holder's, so that
  // the holder that takes it next is told: the death was not told to
  // anyone who kept the permit.
  void GiveBack(SlotState& st) {
    ReleaseSlots(st, st.held);
    st.held.clear();
  }
  void ReleaseSlots(SlotState& st, absl::Span<const uint32_t> slots) {
    for (uint32_t slot : slots) {
      Key& k = *st.keys[slot];
      (void)(k.previous_owner_died() ? StoreCalls::ReleaseAsDead(*slots_, k)
                                     : StoreCalls::Release(*slots_, k));
    }
  }

  // Records in the semaphore's key what its slots reported.
  absl::StatusOr<bool> Finish(Key& key, SlotState& st, absl::StatusOr<bool> got) {
    if (!got.ok() || !*got) return got;
    KeyWriter w(key);
    w.set_slots(st.held);
    bool died = false;
    for (uint32_t slot : st.held) died = died || st.keys[slot]->previous_owner_died();
    w.set_previous_owner_died(died);
    w.set_fence(st.keys[st.held.front()]->fence());
    if (!st.keys[st.held.front()]->serializable()) w.MarkUnserializable();
    KeepShortestLease(key, st);
    return true;
  }

  // The semaphore's lease is its shortest slot's.
  void KeepShortestLease(Key& key, const SlotState& st) {
    if (!slot_caps_.expiring) return;
    std::optional<Deadline> shortest;
    for (uint32_t slot : st.held) {
      std::optional<Deadline> e = st.keys[slot]->expiry();
      if (e && (!shortest || e->monotonic_nanos() < shortest->monotonic_nanos())) shortest = e;
    }
    KeyWriter(key).set_expiry(shortest);
  }

  absl::Status Extend(Key& key, absl::Duration ttl) override {
    SlotState* st = state(key);
    if (st == nullptr || st->held.empty()) {
      return LostError(describe_, key.resource(), "the semaphore is not held");
    }
    absl::Status first;
    for (uint32_t slot : st->held) {
      absl::Status s = ExtendSlot(*st->keys[slot], ttl);
      if (first.ok() && !s.ok()) first = s;
    }
    KeepShortestLease(key, *st);
    return first;
  }

  absl::Status Release(Key& key) override { return ReleaseSlots(key, /*died=*/false); }
  absl::Status ReleaseAsDead(Key& key) override { return ReleaseSlots(key, /*died=*/true); }

  // Releases every slot; the first failure (a slot lost while held) is the
  // result, and every slot is released all the same.
  absl::Status ReleaseSlots(Key& key, bool died) {
    SlotState* st = state(key);
    if (st == nullptr) return absl::OkStatus();
    absl::Status first;
    for (uint32_t slot : st->held) {
      Key& k = *st->keys[slot];
      absl::Status s = died ? StoreCalls::ReleaseAsDead(*slots_, k) : StoreCalls::Release(*slots_, k);
      if (first.ok() && !s.ok()) first = s;
    }
    st->held.clear();
    KeyWriter(key).clear_slots();
    return first;
  }

  absl::StatusOr<bool> IsHeld(Key& key) override {
    SlotState* st = state(key);
    if (st == nullptr || st->held.empty()) return false;
    for (uint32_t slot : st->held) {
      absl::StatusOr<bool> held = StoreCalls::IsHeld(*slots_, *st->keys[slot]);
      if (!held.ok() || !*held) return held;
    }
    return true;
  }

  absl::Status CheckHeld(Key& key) override {
    SlotState* st = state(key);
    if (st == nullptr || st->held.empty()) {
      return LostError(describe_, key.resource(), "the semaphore is not held");
    }
    for (uint32_t slot : st->held) {
      if (absl::Status s = StoreCalls::CheckHeld(*slots_, *st->keys[slot]); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // One slot's targets as they are; several merged, with the claims that
  // one slot's events tell all dropped (the watch then also checks at its
  // interval).
  WatchTargets GetWatchTargets(Key& key) override {
    SlotState* st = state(key);
    if (st == nullptr || st->held.empty()) return WatchTargets();
    if (st->held.size() == 1) {
      return StoreCalls::GetWatchTargets(*slots_, *st->keys[st->held.front()]);
    }
    WatchTargets all;
    std::vector<std::shared_ptr<WatchProbe>> probes;
    for (uint32_t slot : st->held) {
      WatchTargets t = StoreCalls::GetWatchTargets(*slots_, *st->keys[slot]);
      all.inode_fds.insert(all.inode_fds.end(), t.inode_fds.begin(), t.inode_fds.end());
      all.dir_fds_above.insert(all.dir_fds_above.end(), t.dir_fds_above.begin(),
                               t.dir_fds_above.end());
      all.poll_fds.insert(all.poll_fds.end(), t.poll_fds.begin(), t.poll_fds.end());
      if (t.probe != nullptr) probes.push_back(std::move(t.probe));
      all.mounts = all.mounts || t.mounts;
      all.checks_wait = all.checks_wait || t.checks_wait;
      all.check_at_least_every = std::min(all.check_at_least_every, t.check_at_least_every);
    }
    if (!probes.empty()) all.probe = std::make_shared<EitherProbe>(std::move(probes));
    return all;
  }

  std::shared_ptr<Store> slots_;
  Capabilities slot_caps_;
  Capabilities caps_;
  std::string describe_;
};

}  // namespace

std::string SemaphoreSlotName(absl::string_view resource, uint32_t slot) {
  return absl::StrCat(resource, kSeparator, slot);
}

std::shared_ptr<Store> NewSlotSemaphoreStore(std::shared_ptr<Store> slots) {
  if (slots == nullptr) return nullptr;
  return std::make_shared<SlotSemaphoreStore>(std::move(slots));
}

std::shared_ptr<Store> SemaphoreStoreFor(std::shared_ptr<Store> store) {
  if (store == nullptr) return nullptr;
  if (std::shared_ptr<Store> native = StoreCalls::NativeSemaphores(*store)) return native;
  const Capabilities caps = store->capabilities();
  if (caps.counting && caps.weighted) return store;
  return NewSlotSemaphoreStore(std::move(store));
}

}  // namespace ipclock
