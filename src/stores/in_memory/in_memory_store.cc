// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// InMemoryStore: one table per store object, guarded by one mutex; waiters
// sleep on a condition variable that every release and every expiry wakes.
// A holder is identified by a number drawn from a store-wide counter when its
// key first saves; the number lives in the key's state, so it survives moves
// of the Key or Lock, and it is never reused (an address would be: a lock kept
// past its destroyed Lock must not be mistaken for a new key's lock).

#include "stores/in_memory/in_memory_store.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/capability_flags.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "platform/condition_wait.h"
#include "platform/errors.h"
#include "ipclock/spi/store_interface.h"

namespace ipclock {
namespace {

constexpr absl::string_view kName = "in-memory";

struct Holder : KeyState {
  explicit Holder(uint64_t id) : id(id) {}
  const uint64_t id;
  // A Acquire of this key returned true since its last Release.
  bool acquired = false;
};

using HolderMap = std::map<uint64_t, Deadline>;

struct Entry {
  HolderMap exclusive;  // at most `permits` entries
  HolderMap shared;
  uint32_t permits = 1;

  bool empty() const { return exclusive.empty() && shared.empty(); }
};

Capabilities InMemoryCapabilities() {
  return MakeCapabilities(kInMemoryEntry.scope,
                          kCanBlock | kCanExpire | kCanShare | kCanFence | kCanCount);
}

class InMemoryStore final : public StoreWithState<Holder> {
 public:
  absl::string_view name() const override { return kName; }

  Capabilities capabilities() const override { return InMemoryCapabilities(); }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode,
                            Deadline deadline) override {
    KeyWriter(key).MarkUnserializable();
    Holder* holder = state(key);
    if (holder == nullptr) holder = &EnsureState(key, next_holder_id_.fetch_add(1));
    const uint64_t id = holder->id;
    const Deadline expiry = key.has_expiry()
                                ? Deadline::In(key.RemainingLifetime())
                                : Deadline::Never();
    std::unique_lock<std::mutex> guard(mu_);
    for (;;) {
      Entry& e = table_[key.resource()];
      Deadline next_expiry = DropExpired(e);
      if (TrySave(e, id, key, mode, expiry)) {
        holder->acquired = true;
        return true;
      }
      if (deadline.has_passed()) {
        if (e.empty()) table_.erase(key.resource());
        return false;
      }
      Deadline wake = next_expiry < deadline ? next_expiry : deadline;
      WaitOnCondition(cv_, guard, ForPlatform(wake));
    }
  }

  absl::Status Extend(Key& key, absl::Duration ttl) override {
    const Holder* holder = state(key);
    std::lock_guard<std::mutex> guard(mu_);
    auto it = table_.find(key.resource());
    if (holder != nullptr && it != table_.end()) {
      DropExpired(it->second);
      for (HolderMap* m : {&it->second.exclusive, &it->second.shared}) {
        auto h = m->find(holder->id);
        if (h != m->end()) {
          h->second = Deadline::In(ttl);
          return absl::OkStatus();
        }
      }
    }
    return LostError(kName, key.resource(),
                     "cannot refresh: this key no longer holds the lock");
  }

  absl::Status Release(Key& key) override {
    std::unique_ptr<Holder> holder = TakeState(key);
    if (holder == nullptr || !holder->acquired) return absl::OkStatus();
    std::lock_guard<std::mutex> guard(mu_);
    auto it = table_.find(key.resource());
    size_t removed = 0;
    if (it != table_.end()) {
      removed = it->second.exclusive.erase(holder->id) +
                it->second.shared.erase(holder->id);
      if (it->second.empty()) table_.erase(it);
    }
    if (removed > 0) {
      cv_.notify_all();
      return absl::OkStatus();
    }
    // The key had acquired (it has state) but its entry is gone: its lease
    // ran out and the store dropped it. Released all the same, but not OK.
    return LostError(kName, key.resource(),
                     "the lock was no longer held at release (its lease ran "
                     "out)");
  }

  absl::StatusOr<bool> IsHeld(Key& key) override {
    const Holder* holder = state(key);
    if (holder == nullptr) return false;
    std::lock_guard<std::mutex> guard(mu_);
    auto it = table_.find(key.resource());
    if (it == table_.end()) return false;
    DropExpired(it->second);
    return it->second.exclusive.count(holder->id) +
               it->second.shared.count(holder->id) >
           0;
  }

 private:
  // Drops holders whose lease ran out; returns the earliest remaining expiry.
  Deadline DropExpired(Entry& e) {
    Deadline earliest = Deadline::Never();
    bool dropped = false;
    for (HolderMap* m : {&e.exclusive, &e.shared}) {
      for (auto it = m->begin(); it != m->end();) {
        if (it->second.has_passed()) {
          it = m->erase(it);
          dropped = true;
        } else {
          if (it->second < earliest) earliest = it->second;
          ++it;
        }
      }
    }
    if (dropped) cv_.notify_all();
    return earliest;
  }

  bool TrySave(Entry& e, uint64_t holder, Key& key, LockMode mode,
               Deadline expiry) {
    const bool is_exclusive = e.exclusive.count(holder) > 0;
    const bool is_shared = e.shared.count(holder) > 0;
    if (mode == LockMode::kExclusive) {
      if (is_exclusive) {
        e.exclusive.insert_or_assign(holder, expiry);
        return true;
      }
      // A sole reader may promote; otherwise readers block writers.
      size_t other_readers = e.shared.size() - (is_shared ? 1 : 0);
      if (other_readers > 0) return false;
      if (e.exclusive.empty()) e.permits = key.permits();
      if (e.exclusive.size() >= e.permits) return false;
      e.shared.erase(holder);
      e.exclusive.insert_or_assign(holder, expiry);
      KeyWriter(key).set_fence(++fence_);
      return true;
    }
    if (is_shared) {
      e.shared.insert_or_assign(holder, expiry);
      return true;
    }
    size_t other_writers = e.exclusive.size() - (is_exclusive ? 1 : 0);
    if (other_writers > 0) return false;
    // Demotion lets waiting readers in.
    if (is_exclusive) {
      e.exclusive.erase(holder);
      cv_.notify_all();
    }
    e.shared.insert_or_assign(holder, expiry);
    return true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  absl::flat_hash_map<std::string, Entry> table_;
  // One counter for all resources: fences only need to grow per resource,
  // and a store-wide counter survives the erasure of idle entries.
  uint64_t fence_ = 0;
  std::atomic<uint64_t> next_holder_id_{1};
};

}  // namespace

std::shared_ptr<Store> NewInMemoryStore() {
  return std::make_shared<InMemoryStore>();
}

namespace {

absl::StatusOr<PreparedStore> PrepareInMemory(Dsn& dsn, const StoreOptions&) {
  if (dsn.has_authority() || !dsn.path().empty()) {
    return BadDsn(dsn, "in-memory takes no address");
  }
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  PreparedStore prepared;
  prepared.capabilities = InMemoryCapabilities();
  prepared.build = [] { return absl::StatusOr<std::shared_ptr<Store>>(NewInMemoryStore()); };
  return prepared;
}

}  // namespace

const StoreDriver kInMemoryDriver = {&PrepareInMemory, nullptr};

}  // namespace ipclock
