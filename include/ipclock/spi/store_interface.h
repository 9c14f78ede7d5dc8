// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: spi/store_interface.h
// -----------------------------------------------------------------------------
//
// For store writers (the store SPI). Programs never include this header:
// they take locks with ipclock/ipclock.h.
//
// What a store implements, and how code that sits between `Lock` and a store
// (a combined store, a test) calls one.
//
// Every store is a `StoreInterface`: the `Store` of ipclock/store.h (what
// programs see: a name, a description, capabilities) with the operations
// below, which `Lock` calls through `StoreCalls`. A store derives from
// `StoreWithState<State>`, where `State` is what the store keeps per
// acquisition in the `Key` (an open file, a slot index, a connection;
// spi/key_state.h), records what it found in the key with `KeyWriter`, and
// overrides the private operations of `StoreInterface`. They bear the names
// of the API's (`Lock::Acquire`, `Refresh` as `Extend`, `Release`,
// `CheckAcquired` as `IsHeld`); doc/stores.md maps them to Symfony's.
//
//   * `Acquire(key, mode, deadline)` acquires. True once the key holds the lock;
//     false when another holder still has it at `deadline` (contention is a
//     value, not an error); an error status when the store failed, and then
//     the key holds nothing (fail closed). `Deadline::Past()` tries once.
//     Saving a key that holds the lock in the same mode is a no-op that
//     returns true; in the other mode it converts the lock (promotion or
//     demotion) where the store has shared locks. A store never returns
//     DeadlineExceeded (a server that did not answer in time is
//     Unavailable): to callers of `Lock::Acquire()` that code means "the lock
//     stayed busy", and `StoreCalls::Acquire()` enforces it.
//   * `Extend(key, ttl)` extends the lease of a held key (expiring
//     stores only; `StoreCalls` never calls it on others). Aborted when the
//     key no longer holds the lock.
//   * `Release(key)` releases. A key that holds nothing is OK and touches
//     nothing. A key that held the lock but finds it gone (the lock file
//     deleted, the Redis key flushed, the session ended) is released all the
//     same and the call returns Aborted saying what was found: a release
//     never reports success for a lock that was lost while held.
//   * `ReleaseAsDead(key)` releases as `Release()` does, but as a holder that died
//     would: the next holder is told that its predecessor died holding the
//     lock (`previous_owner_died()`), for a holder whose work under the
//     lock was cut short. The default is `Release()`: a store that reports
//     no owner death has nothing to leave behind. A store that does and
//     releases both ways alike derives from `StoreWithRelease<State>`.
//   * `IsHeld(key)` says whether the key holds the lock now.
//   * `CheckHeld(key)` says cheaply, for the watch on held locks
//     (lock_watch.h), whether the lock is still held and still the same lock:
//     OK; Aborted naming what was lost and how (a removed segment, a deleted
//     lock file, an ended session); Unavailable when it cannot tell now. The
//     default asks `IsHeld()`. It may run on another thread than the one
//     that acquired (never at the same time as another call on that key),
//     so it must not take or release anything. The watch runs the checks
//     of a remote store, or of one with an event source, on a thread of
//     that store's own, so that a server that is slow or stopped delays no
//     other store's checks; such a check must still end within the store's
//     own timeouts. A local store's checks run on the watch's thread: system
//     calls that never wait for long.
//   * `GetWatchTargets(key)` names what the kernel or the server can report
//     on, and a cheap check for what neither reports (see `WatchTargets`);
//     the default is nothing, and the watch then checks at its interval
//     only.
//   * `GetWaitWord(key)` gives a futex word for async waits (async.h).
//
// Every operation takes the `Key` of one acquisition, is called for one key
// from one thread at a time, and must be safe to call for different keys
// from many threads at once.
//
// Failures: a store puts each in one class of ipclock/errors.h
// (configuration, refused, transient, ...), in one place per store, and
// returns that class's code (ipclock's own stores make the status with the
// constructor of its class, src/core/store_errors.h). Only a transient
// failure is ever retried, by callers and by the store's own waits;
// whatever the store can tell from its options alone is refused when it is
// built, before any connection or file is opened.

#ifndef IPCLOCK_SPI_STORE_INTERFACE_H_
#define IPCLOCK_SPI_STORE_INTERFACE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/spi/key.h"
#include "ipclock/spi/key_state.h"
#include "ipclock/store.h"

namespace ipclock {

// Where an async waiter (ipclock/async.h) can sleep until a lock may have
// been released, instead of holding a thread blocked in `Acquire()`.
struct WaitWord {
  // A 32-bit futex word; nullptr when the store has none.
  uint32_t* word = nullptr;
  // The resource may be free when `*word & owner_mask` is 0.
  uint32_t owner_mask = 0;
  // A bit that a sleeper sets in the word before it sleeps, and again after
  // a try that took the lock, so that releases wake the sleepers (glibc's
  // FUTEX_WAITERS). A sleeper that is woken and does not take the lock
  // passes the wake on (FUTEX_WAKE of one).
  uint32_t waiters_bit = 0;
  // The word is in memory shared between processes (no FUTEX_PRIVATE).
  bool shared = true;
};

// A check of a held lock cheap enough to run every `kWatchProbeInterval`
// (a system call or two, e.g. a stat of the lock dir's path or a GETVAL of a
// SysV set), for the losses of local stores that the kernel sends no event
// for. Locks that share a probe (those of one lock dir) share its cost.
class WatchProbe {
 public:
  virtual ~WatchProbe() = default;
  // True when the lock may have been lost: the watch then runs
  // `CheckHeld()` of every lock that shares this probe. Called from the
  // watch's thread only, never at the same time as itself; it must not
  // block (no network, no lock that a store call holds for long).
  virtual bool Changed() = 0;
};

// How often the watch runs the probes of held locks: within it, plus the
// time a check takes, a loss that only a probe sees is reported.
inline constexpr absl::Duration kWatchProbeInterval = absl::Milliseconds(50);

// A server that tells its clients at once what changed (Redis client
// tracking), so that the watch need not poll it. One source serves every
// lock of a store; each lock has a tag in it (the Redis key's name).
class WatchEventSource {
 public:
  virtual ~WatchEventSource() = default;
  // The descriptor that turns readable when the source has something to
  // say, or -1 while it is not set up (never followed, refused, or broken
  // until the next Follow()). Called from the watch's thread.
  virtual int fd() = 0;
  // Reads what arrived, without blocking, and calls `changed(tag)` for each
  // tag it names. False when anything may have changed: everything was
  // flushed, or the source broke (its fd() is then -1). Called from the
  // watch's thread only.
  virtual bool Drain(absl::FunctionRef<void(absl::string_view tag)> changed) = 0;
  // Asks to be told from now on when what `tag` names changes, setting the
  // source up first if it is not. May take a round trip: the watch calls
  // it from the thread that checks the lock, before each check that follows
  // a change. False when the source cannot tell (the server refused it, or
  // cannot be reached): the watch then checks the lock at its interval.
  virtual bool Follow(absl::string_view tag) = 0;
};

// What the kernel or the server can tell the watch on held locks about, so
// that a loss is seen at once rather than at the next interval check.
// Descriptors stay owned by the key's state; the watch only looks.
struct WatchTargets {
  // Descriptors of objects whose unlinking, renaming or removal loses the
  // lock: a lock file, its dir, a /dev/shm object. The watch puts an inotify
  // watch on each one's inode and calls `CheckHeld()` when it fires.
  absl::InlinedVector<int, 2> inode_fds;
  // Descriptors of dirs above the lock whose renaming loses it (not what
  // happens inside them): the watch asks inotify for their own moves and
  // removal only.
  absl::InlinedVector<int, 4> dir_fds_above;
  // Descriptors that turn readable or hang up when the lock may have been
  // lost, such as a database session's socket.
  absl::InlinedVector<int, 1> poll_fds;
  // Run every kWatchProbeInterval while the lock is watched.
  std::shared_ptr<WatchProbe> probe;
  // With `event_tag`: the server tells of changes to this lock. While the
  // source follows the tag, the watch checks the lock when the source
  // names it (and at ten times its interval, as a safety net).
  std::shared_ptr<WatchEventSource> events;
  std::string event_tag;
  // True when `poll_fds` turn readable on every loss the server can cause
  // (ZooKeeper's watch on the lock node, and its session's events), each
  // check setting up again what the next loss fires. While the last check
  // found the lock held, the interval check is then a safety net, run ten
  // times less often, as for a followed event tag; after a check that
  // could not tell, it runs at the interval.
  bool poll_fds_tell_all = false;
  // The lock is lost if something is mounted over its file or dir (or
  // over a dir above it), which sends no inotify event: the watch checks
  // it whenever the process's mount table changes.
  bool mounts = false;
  // True when `inode_fds`, the probe and (with `mounts`) the mount table
  // tell of every loss the store can have (flock on a local filesystem).
  // As with `poll_fds_tell_all`, the interval check is then a safety net
  // while checks find the lock held; the watch takes the store's word only
  // if every one of `inode_fds` got its inotify watch.
  bool events_tell_all = false;
  // The longest the store lets a loss that nothing reports go unseen: the
  // watch checks the lock at least this often, whatever its
  // `check_interval`. For stores whose losses only a check finds (a row
  // deleted, a memcached key flushed) and whose checks of all the held
  // locks of a round cost one request, so that a short bound stays cheap.
  absl::Duration check_at_least_every = absl::InfiniteDuration();
  // `CheckHeld()` may wait on a server although the store is not remote
  // (a combined store with a remote member): the watch then checks the
  // lock on a thread of the store's own, as it does a remote store's, so
  // that a server that is slow or stopped delays no other lock's check.
  bool checks_wait = false;
};

// The store SPI's side of every store: the operations that take and
// release locks (their contracts are at the top of this file), and each
// store object's slot in a `Key`.
class StoreInterface : public Store {
 protected:
  StoreInterface() = default;

  // The slot in `key` that belongs to this store object. Typed access is in
  // `StoreWithState` below; nothing else should use these. Inline: every
  // reused acquisition and release looks its state up.
  KeyState* StateSlot(const Key& key) const { return key.state(this); }
  void SetStateSlot(Key& key, std::unique_ptr<KeyState> state) const;
  std::unique_ptr<KeyState> TakeStateSlot(Key& key) const;

 private:
  // Callers go through `StoreCalls`, which checks the request first.
  friend class StoreCalls;
  virtual absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) = 0;
  virtual absl::Status Extend(Key& key, absl::Duration ttl);
  virtual absl::Status Release(Key& key) = 0;
  virtual absl::Status ReleaseAsDead(Key& key);
  virtual absl::StatusOr<bool> IsHeld(Key& key) = 0;
  virtual absl::Status CheckHeld(Key& key);
  virtual WatchTargets GetWatchTargets(Key& key);
  virtual absl::StatusOr<WaitWord> GetWaitWord(Key& key);
  // The store on which this one keeps counting semaphores in a layout of
  // its own (the Redis store: Symfony Semaphore's sorted sets), or null
  // where semaphores are slot locks or the store's own locks
  // (ipclock/stores/slot_semaphore_store.h). Made once and kept.
  virtual std::shared_ptr<Store> NativeSemaphores();
};

// Calls the operations of a store, checking each request against the
// store's capabilities first, so that no store has to.
class StoreCalls {
 public:
  // InvalidArgument for a shared lock on a store without shared locks and
  // for `key.permits() > 1` on a store that does not count (configuration
  // faults, ipclock/errors.h).
  // A DeadlineExceeded from the store becomes Unavailable.
  static absl::StatusOr<bool> Acquire(Store& store, Key& key, LockMode mode,
                                   Deadline deadline) {
    return Acquire(store, store.capabilities(), key, mode, deadline);
  }
  // The same with the store's capabilities already at hand (they are fixed
  // for its life), for callers on the hot path.
  static absl::StatusOr<bool> Acquire(Store& store, const Capabilities& caps, Key& key,
                                   LockMode mode, Deadline deadline);
  // OK without asking a store whose locks do not expire. InvalidArgument for
  // a TTL that is not positive and finite.
  static absl::Status Extend(Store& store, Key& key,
                                       absl::Duration ttl);
  static absl::Status Release(Store& store, Key& key) { return Ops(store).Release(key); }
  static absl::Status ReleaseAsDead(Store& store, Key& key) { return Ops(store).ReleaseAsDead(key); }
  static absl::StatusOr<bool> IsHeld(Store& store, Key& key);
  static absl::Status CheckHeld(Store& store, Key& key);
  static WatchTargets GetWatchTargets(Store& store, Key& key);
  static absl::StatusOr<WaitWord> GetWaitWord(Store& store, Key& key);
  static std::shared_ptr<Store> NativeSemaphores(Store& store) {
    return Ops(store).NativeSemaphores();
  }
  // A store's failure as `Acquire()` reports it: DeadlineExceeded becomes
  // Unavailable.
  static absl::Status AsAcquireError(absl::Status error);
  // One exclusive try, without the checks above: for `Lock`'s reused
  // handle, which has made them (no lease to set, nothing held, a permit
  // count checked at creation). A failure goes through `AsAcquireError()`.
  static absl::StatusOr<bool> TryAcquireExclusive(Store& store, Key& key) {
    return Ops(store).Acquire(key, LockMode::kExclusive, Deadline::Past());
  }

 private:
  // Every Store is a StoreInterface: Store's only constructor is for it.
  static StoreInterface& Ops(Store& store) { return static_cast<StoreInterface&>(store); }
};

// The base of every store: typed access to the store's own state in each
// key. Each store object has one slot per key, so two stores of one kind
// (two lock dirs, the members of a combined store) never see each other's.
template <typename State>
class StoreWithState : public StoreInterface {
  static_assert(std::is_base_of<KeyState, State>::value,
                "a store's key state derives from KeyState");

 protected:
  // This store's state in `key`, or nullptr if it has none.
  State* state(const Key& key) const {
    // The slot of this store is only ever filled below, with a State.
    return static_cast<State*>(StateSlot(key));
  }
  // The state, made from `args` if the key has none yet.
  template <typename... Args>
  State& EnsureState(Key& key, Args&&... args) const {
    if (State* s = state(key)) return *s;
    auto fresh = std::make_unique<State>(std::forward<Args>(args)...);
    State& out = *fresh;
    SetStateSlot(key, std::move(fresh));
    return out;
  }
  // Removes the state from the key and hands it over.
  std::unique_ptr<State> TakeState(Key& key) const {
    return std::unique_ptr<State>(static_cast<State*>(TakeStateSlot(key).release()));
  }
  // `IsHeld()` from what `CheckHeld()` found: true when OK, false when the
  // lock was lost (Aborted), the error when the store could not tell.
  static absl::StatusOr<bool> HeldUnlessLost(const absl::Status& check) {
    if (check.ok()) return true;
    if (absl::IsAborted(check)) return false;
    return check;
  }
};

// The base of a store whose release as a holder that died differs from its
// plain release only in what it leaves behind for the next holder (a mark,
// a marker, an expired row): the store implements one `DoRelease(key, died)`,
// which `Release()` calls with `died` false and `ReleaseAsDead()` with true.
template <typename State>
class StoreWithRelease : public StoreWithState<State> {
 private:
  absl::Status Release(Key& key) final { return DoRelease(key, /*died=*/false); }
  absl::Status ReleaseAsDead(Key& key) final { return DoRelease(key, /*died=*/true); }
  // Releases as `Release()` does; with `died`, leaves what tells the next
  // holder that its predecessor died holding the lock.
  virtual absl::Status DoRelease(Key& key, bool died) = 0;
};

}  // namespace ipclock

#endif  // IPCLOCK_SPI_STORE_INTERFACE_H_
