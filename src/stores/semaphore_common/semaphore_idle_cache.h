// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The idle attachments of a semaphore store, kept for the next Lock on the
// same resource: an attachment is what it costs system calls to make and to
// end (a SysV set joined with PHP's sem_get protocol; a POSIX registry slot
// with its mappings), so a full cycle on a resource used a moment ago takes
// one from here instead. Each attachment is used by one Lock at a time:
// `Take()` hands it over, `Put()` takes it back when that Lock is gone.
// `Attachment::resource()` names the resource it belongs to.
//
// Bounded three ways: at most `capacity` idle attachments (the least
// recently used one goes first), none idle for longer than `max_idle` (the
// next Take() or Put() ends those), and none once the store is destroyed
// (`Drain()`). What leaves the cache is handed back to the caller, who ends
// it outside the lock.
//
// The cost of a Take() and a Put() is part of every full cycle: the
// resource is hashed once per Lock (`NameOf()`), the lock is a plain mutex,
// and entries and their index are reused, so that a cycle allocates nothing
// here.
//
// fork(): the child gets a copy of the parent's attachments, which are not
// its own (its parent's SEM_UNDO counts, slots naming its parent), and maybe
// a mutex that a parent's thread held at that instant. The first call in the
// child therefore replaces the whole cache with an empty one, leaking the
// copy without touching it, and the child keeps nothing idle: a child ends
// with _exit() or a signal as often as not, and never destroys the store it
// inherited, so what it kept would stay behind (in `ipcs -s`, in /dev/shm)
// for resources nobody uses again. A child that wants idle attachments
// makes a store of its own.

#ifndef IPCLOCK_STORES_SEMAPHORE_IDLE_CACHE_H_
#define IPCLOCK_STORES_SEMAPHORE_IDLE_CACHE_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/key_state.h"
#include "platform/coarse_clock.h"
#include "platform/process_id.h"

namespace ipclock {

template <typename Attachment>
class SemaphoreIdleCache {
 public:
  // A resource with its hash, computed once per Lock.
  struct Name {
    absl::string_view text;
    size_t hash = 0;
  };
  static Name NameOf(absl::string_view resource) {
    return Name{resource, absl::Hash<absl::string_view>{}(resource)};
  }

  SemaphoreIdleCache(size_t capacity, int64_t max_idle_nanos)
      : capacity_(capacity),
        max_idle_nanos_(max_idle_nanos),
        core_(new Core(CurrentPid())) {}
  ~SemaphoreIdleCache() {
    Core* core = core_.load(std::memory_order_acquire);
    if (core->pid == CurrentPid()) delete core;  // else a parent's copy
  }
  SemaphoreIdleCache(const SemaphoreIdleCache&) = delete;
  SemaphoreIdleCache& operator=(const SemaphoreIdleCache&) = delete;

  // An idle attachment for `name`, or nullptr. Attachments idle for too
  // long are moved to `*expired`.
  std::unique_ptr<Attachment> Take(const Name& name,
                                   std::vector<std::unique_ptr<Attachment>>* expired) {
    if (capacity_ == 0) return nullptr;
    Core* core = ThisProcessCore();
    std::lock_guard<std::mutex> lock(core->mu);
    if (core->closed) return nullptr;
    Expire(core, CoarseMonotonicNanos(), expired);
    auto it = core->index.find(name);
    if (it == core->index.end() || it->second.empty()) return nullptr;
    Entry* entry = it->second.back();
    it->second.pop_back();
    return Unlist(core, entry);
  }

  // Keeps `attachment` (of resource `name`) for the next Take(). Returns what
  // must be ended now: the least recently used attachments beyond the
  // capacity, those idle for too long, or `attachment` itself when nothing
  // may be kept.
  std::vector<std::unique_ptr<Attachment>> Put(const Name& name,
                                               std::unique_ptr<Attachment> attachment) {
    std::vector<std::unique_ptr<Attachment>> out;
    if (capacity_ == 0) {
      out.push_back(std::move(attachment));
      return out;
    }
    Core* core = ThisProcessCore();
    std::lock_guard<std::mutex> lock(core->mu);
    if (core->closed) {
      out.push_back(std::move(attachment));
      return out;
    }
    const int64_t now = CoarseMonotonicNanos();
    Expire(core, now, &out);
    if (core->spare.empty()) core->spare.emplace_back();
    core->lru.splice(core->lru.begin(), core->spare, core->spare.begin());
    Entry* entry = &core->lru.front();
    entry->attachment = std::move(attachment);
    entry->hash = name.hash;
    entry->idle_since = now;
    entry->lru_pos = core->lru.begin();
    auto it = core->index.find(name);
    if (it == core->index.end()) {
      if (core->index.size() >= 4 * capacity_ + 16) {
        // Resources whose attachments were all taken and never came back.
        absl::erase_if(core->index, [](const auto& kv) { return kv.second.empty(); });
      }
      it = core->index.try_emplace(std::string(name.text)).first;
    }
    it->second.push_back(entry);
    while (core->lru.size() > capacity_) {
      out.push_back(Remove(core, &core->lru.back()));
    }
    return out;
  }

  // Empties the cache for good (the store is being destroyed): every idle
  // attachment is handed back, and later Put()s give theirs back at once.
  std::vector<std::unique_ptr<Attachment>> Drain() {
    std::vector<std::unique_ptr<Attachment>> out;
    Core* core = ThisProcessCore();
    std::lock_guard<std::mutex> lock(core->mu);
    core->closed = true;
    while (!core->lru.empty()) out.push_back(Remove(core, &core->lru.back()));
    return out;
  }

 private:
  struct Entry {
    std::unique_ptr<Attachment> attachment;
    size_t hash = 0;
    int64_t idle_since = 0;
    typename std::list<Entry>::iterator lru_pos;
  };
  // The index is keyed by resource; a Name is looked up with the hash it
  // carries, so that a Lock hashes its resource once.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(absl::string_view s) const { return absl::Hash<absl::string_view>{}(s); }
    size_t operator()(const Name& n) const { return n.hash; }
  };
  struct NameEq {
    using is_transparent = void;
    static absl::string_view Text(absl::string_view s) { return s; }
    static absl::string_view Text(const Name& n) { return n.text; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Text(a) == Text(b);
    }
  };
  struct Core {
    explicit Core(pid_t owner) : pid(owner) {}
    const pid_t pid;
    // A plain mutex: held for a few hundred instructions, never contended
    // for long (absl::Mutex's bookkeeping would cost as much as the rest).
    std::mutex mu;
    // Guarded by `mu`, as everything below.
    bool closed = false;
    // Most recently used first. Entries do not move while listed; spare
    // entries are kept for reuse.
    std::list<Entry> lru;
    std::list<Entry> spare;
    // A resource's idle entries, the last returned last. Resources with
    // none left keep their (empty) vector, so that a full cycle allocates
    // nothing; they go as entries leave for good, or in bulk when too many.
    absl::flat_hash_map<std::string, std::vector<Entry*>, NameHash, NameEq> index;
  };

  Core* ThisProcessCore() {
    Core* core = core_.load(std::memory_order_acquire);
    const pid_t self = CurrentPid();
    if (core->pid == self) return core;
    // A forked child (see the top of the file): the parent's copy is left
    // as it is, never locked, never freed, and nothing is kept.
    Core* fresh = new Core(self);
    fresh->closed = true;
    if (core_.compare_exchange_strong(core, fresh, std::memory_order_acq_rel)) {
      return fresh;
    }
    delete fresh;  // another thread of the child replaced it first
    return core;
  }

  // Expire, Remove and Unlist run holding core->mu.
  void Expire(Core* core, int64_t now, std::vector<std::unique_ptr<Attachment>>* out) {
    while (!core->lru.empty() && now - core->lru.back().idle_since > max_idle_nanos_) {
      out->push_back(Remove(core, &core->lru.back()));
    }
  }

  std::unique_ptr<Attachment> Remove(Core* core, Entry* entry) {
    auto it = core->index.find(Name{entry->attachment->resource(), entry->hash});
    std::vector<Entry*>& list = it->second;
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i] == entry) {
        list.erase(list.begin() + static_cast<ptrdiff_t>(i));
        break;
      }
    }
    if (list.empty()) core->index.erase(it);
    return Unlist(core, entry);
  }

  // Moves `entry` to the spare list and returns its attachment.
  std::unique_ptr<Attachment> Unlist(Core* core, Entry* entry) {
    std::unique_ptr<Attachment> out = std::move(entry->attachment);
    core->spare.splice(core->spare.begin(), core->lru, entry->lru_pos);
    return out;
  }

  const size_t capacity_;
  const int64_t max_idle_nanos_;
  std::atomic<Core*> core_;
};

// What both semaphore stores keep in a Key besides its attachment (which
// is taken from the store's cache or made at its first acquisition, kept
// while the Lock lives, held or not, and given back to the cache when it
// is destroyed): the cache, the resource's hash for it, whether the key
// holds a permit, and what CheckHeld() found when it found the held permit
// lost (the release reports it).
template <typename Attachment>
struct CachedAttachmentState : KeyState {
  std::shared_ptr<SemaphoreIdleCache<Attachment>> cache;
  size_t resource_hash = 0;  // for the cache's Name
  bool held = false;
  absl::Status loss;

  // Gives `attachment` back to the cache; what must be ended now as
  // SemaphoreIdleCache::Put() returns it.
  std::vector<std::unique_ptr<Attachment>> GiveBack(std::unique_ptr<Attachment> attachment) {
    // The view stays valid: the attachment itself does not move.
    const typename SemaphoreIdleCache<Attachment>::Name name{attachment->resource(),
                                                             resource_hash};
    return cache->Put(name, std::move(attachment));
  }
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SEMAPHORE_IDLE_CACHE_H_
