// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// SemaphoreStore: System V semaphore sets in PHP's sem_get() layout. See
// include/ipclock/semaphore_store.h for the contract; the caveats of SysV
// semaphores are written beside the code that deals with them.

#include "stores/sysv_semaphore_store.h"

#include <errno.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "core/errors.h"
#include "platform/proc_pid.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "semaphore";

// The semaphores of a set. #0..#2 are PHP's (ext/sysvsem), #3 and #4 are
// ipclock's and exist only in sets ipclock created.
constexpr unsigned short kLockSem = 0;     // the permits
constexpr unsigned short kUsageSem = 1;    // processes attached
constexpr unsigned short kInitSem = 2;     // held during attach and detach
constexpr unsigned short kPermitsSem = 3;  // permits chosen by the first user
constexpr unsigned short kHeldSem = 4;     // acquisitions not yet released
constexpr int kPhpSems = 3;
constexpr int kOwnSems = 5;

// A semaphore holds at most SEMVMX (32767).
constexpr uint32_t kMaxPermits = 32767;

// Sets removed under one acquisition before we call it a livelock. Symfony
// removes a set on every release, so a busy resource shared with PHP makes
// a waiter re-attach once per release it sees, never thousands of times in
// a row.
constexpr int kMaxVanished = 10000;

union SemArg {
  int val;
  struct semid_ds* buf;
  unsigned short* array;
};

enum class Step { kDone, kBusy, kGone };

struct SemKeyState final : KeyState {
  int32_t ipc_key = 0;
  bool key_known = false;
  int semid = -1;
  int nsems = 0;
  bool attached = false;
  bool held = false;

  bool own_layout() const { return nsems >= kOwnSems; }
};

// EIDRM: the set was removed while we slept on it. EINVAL: it was removed
// before the call (the id no longer names a set). Both mean "semget again".
bool IsGone(int err) { return err == EIDRM || err == EINVAL; }

int SemopRetry(int semid, struct sembuf* ops, size_t n) {
  for (;;) {
    if (semop(semid, ops, n) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

class SemaphoreStore final : public Store {
 public:
  explicit SemaphoreStore(const SemaphoreStoreOptions& options)
      : options_(options) {
    describe_ = absl::StrFormat(
        "semaphore (key_scheme=%s, mode=%04o)",
        options_.key_scheme == SemaphoreKeyScheme::kMd5 ? "md5" : "xxh3",
        static_cast<unsigned>(options_.mode));
  }

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override {
    Capabilities c;
    c.blocking = true;
    c.counting = true;
    c.owner_death = true;
    c.scope = Scope::kLocal;
    return c;
  }

  absl::StatusOr<bool> Save(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status PutOffExpiration(Key&, absl::Duration) override {
    return absl::OkStatus();  // semaphores have no lease
  }
  absl::Status Delete(Key& key) override;
  absl::StatusOr<bool> Exists(Key& key) override;

 private:
  absl::Status Error(int err, const Key& key, const SemKeyState& st,
                     absl::string_view what) const {
    return ErrnoError(err, describe_, key.resource(),
                      absl::StrFormat("%s (IPC key %d)", what, st.ipc_key));
  }

  absl::Status Open(const Key& key, SemKeyState* st);
  absl::StatusOr<Step> Attach(const Key& key, SemKeyState* st);
  absl::Status CheckPermits(const Key& key, const SemKeyState& st);
  absl::StatusOr<Step> Acquire(const Key& key, SemKeyState* st,
                               Deadline deadline, pid_t* last_user);
  absl::Status Detach(const Key& key, SemKeyState* st, bool release_permit);
  absl::Status RemoveOrLeave(const Key& key, SemKeyState* st);
  void CheckOwnerDeath(Key& key, SemKeyState* st, pid_t last_user);

  const SemaphoreStoreOptions options_;
  std::string describe_;
};

// Sets are created with five semaphores. semget() with a count larger than
// an existing set's fails with EINVAL: that is a set PHP made first (three
// semaphores), which we then open with PHP's count. PHP's own semget(key, 3)
// on one of our sets succeeds, since asking for fewer is allowed.
absl::Status SemaphoreStore::Open(const Key& key, SemKeyState* st) {
  for (int i = 0; i < kMaxVanished; ++i) {
    int id = semget(st->ipc_key, kOwnSems, IPC_CREAT | static_cast<int>(options_.mode));
    if (id >= 0) {
      st->semid = id;
      st->nsems = kOwnSems;
      return absl::OkStatus();
    }
    if (errno != EINVAL) return Error(errno, key, *st, "semget");
    id = semget(st->ipc_key, kPhpSems, 0);
    if (id < 0) {
      if (errno == ENOENT) continue;  // removed between the two calls
      return Error(errno, key, *st, "semget (a set made by another program)");
    }
    struct semid_ds ds;
    SemArg arg;
    arg.buf = &ds;
    if (semctl(id, 0, IPC_STAT, arg) != 0) {
      if (IsGone(errno)) continue;
      return Error(errno, key, *st, "semctl IPC_STAT");
    }
    st->semid = id;
    st->nsems = static_cast<int>(ds.sem_nsems);
    return absl::OkStatus();
  }
  return StoreError(absl::StatusCode::kUnavailable, describe_, key.resource(),
                    absl::StrCat("the semaphore set was removed ", kMaxVanished,
                                 " times while being opened"));
}

// PHP's sem_get(): take the init semaphore and count ourselves in with one
// semop, initialize the lock if we are the only user, let go of the init
// semaphore. While we hold #2 nobody else can attach, initialize, or (being
// ipclock) detach and remove the set.
absl::StatusOr<Step> SemaphoreStore::Attach(const Key& key, SemKeyState* st) {
  struct sembuf enter[3] = {{kInitSem, 0, 0},
                            {kInitSem, 1, SEM_UNDO},
                            {kUsageSem, 1, SEM_UNDO}};
  int err = SemopRetry(st->semid, enter, 3);
  if (err != 0) {
    if (IsGone(err)) return Step::kGone;
    return Error(err, key, *st, "semop (attach)");
  }
  st->attached = true;
  absl::Status checked = CheckPermits(key, *st);
  if (!checked.ok()) {
    // Symfony removes sets without taking #2, so the set may have vanished
    // under the check itself.
    struct semid_ds ds;
    SemArg arg;
    arg.buf = &ds;
    if (semctl(st->semid, 0, IPC_STAT, arg) != 0 && IsGone(errno)) {
      st->attached = false;
      return Step::kGone;
    }
    struct sembuf out = {kUsageSem, -1, SEM_UNDO};
    err = SemopRetry(st->semid, &out, 1);
    st->attached = false;
    if (err == 0) RemoveOrLeave(key, st).IgnoreError();
    return checked;
  }
  struct sembuf leave = {kInitSem, -1, SEM_UNDO};
  err = SemopRetry(st->semid, &leave, 1);
  if (err != 0) {
    st->attached = false;
    if (IsGone(err)) return Step::kGone;
    return Error(err, key, *st, "semop (end of attach)");
  }
  return Step::kDone;
}

// Runs holding #2. The first user sets the permits; later users must agree.
absl::Status SemaphoreStore::CheckPermits(const Key& key, const SemKeyState& st) {
  const uint32_t permits = key.permits();
  int users = semctl(st.semid, kUsageSem, GETVAL);
  if (users < 0) return Error(errno, key, st, "semctl GETVAL");
  if (users == 1) {
    if (!st.own_layout() && permits != 1) {
      return StoreError(
          absl::StatusCode::kInvalidArgument, describe_, key.resource(),
          absl::StrCat("permits=", permits, " needs a set made by ipclock, "
                       "but another program (PHP) made this one with ",
                       st.nsems, " semaphores: it can only be a mutex"));
    }
    // SETVAL clears every process's undo adjustment for that semaphore.
    // Harmless here: we are the only process attached, so nobody holds a
    // permit whose undo could be lost.
    SemArg arg;
    arg.val = static_cast<int>(permits);
    if (semctl(st.semid, kLockSem, SETVAL, arg) != 0) {
      return Error(errno, key, st, "semctl SETVAL (permits)");
    }
    if (st.own_layout() && semctl(st.semid, kPermitsSem, SETVAL, arg) != 0) {
      return Error(errno, key, st, "semctl SETVAL (permits record)");
    }
    return absl::OkStatus();
  }
  // 0 in the record: PHP initialized the set, always for one holder
  // (Symfony calls sem_get() with its default max_acquire of 1).
  int recorded = 1;
  if (st.own_layout()) {
    recorded = semctl(st.semid, kPermitsSem, GETVAL);
    if (recorded < 0) return Error(errno, key, st, "semctl GETVAL (permits)");
    if (recorded == 0) recorded = 1;
  }
  if (static_cast<uint32_t>(recorded) != permits) {
    return StoreError(
        absl::StatusCode::kInvalidArgument, describe_, key.resource(),
        absl::StrCat("permits=", permits, " but the processes already using "
                     "this semaphore set made it with permits=", recorded));
  }
  return absl::OkStatus();
}

// One semop for the lock and, in our sets, the count of unreleased
// acquisitions. #4 goes up WITHOUT SEM_UNDO on purpose: a holder that dies
// gets its permit back from the kernel but leaves its mark in #4, which is
// how the next holder learns of the death.
absl::StatusOr<Step> SemaphoreStore::Acquire(const Key& key, SemKeyState* st,
                                             Deadline deadline,
                                             pid_t* last_user) {
  struct sembuf ops[2] = {{kLockSem, -1, SEM_UNDO}, {kHeldSem, 1, 0}};
  const size_t n = st->own_layout() ? 2 : 1;
  if (!st->own_layout()) {
    // PHP's sets keep no such mark; the last pid to touch the lock is the
    // only trace a dead holder leaves (see CheckOwnerDeath).
    int pid = semctl(st->semid, kLockSem, GETPID);
    *last_user = pid > 0 ? pid : 0;
  }
  for (;;) {
    int r;
    if (deadline.is_never()) {
      r = semop(st->semid, ops, n);
    } else {
      absl::Duration left = deadline.Remaining();
      if (left <= absl::ZeroDuration()) {
        ops[0].sem_flg = SEM_UNDO | IPC_NOWAIT;
        r = semop(st->semid, ops, n);
      } else {
        // semtimedop measures a relative timeout on CLOCK_MONOTONIC; taking
        // it from the deadline on every pass keeps EINTR restarts within
        // the caller's total.
        struct timespec ts = absl::ToTimespec(left);
        r = semtimedop(st->semid, ops, n, &ts);
      }
    }
    if (r == 0) return Step::kDone;
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN) {
      if (deadline.has_passed()) return Step::kBusy;
      continue;  // woke a hair before the deadline: wait out the rest
    }
    if (IsGone(err)) return Step::kGone;
    return Error(err, key, *st, "semop (acquire)");
  }
}

// Runs holding #2, after our count in #1 went. The last user removes the set
// so that an idle resource leaves nothing in the kernel.
//
// Caveat: removal races with attachers. Holding #2 closes the race for
// every process that follows PHP's protocol: an attacher waits for #2 to be
// zero in the same semop that counts it in, so none can be counted while we
// look at #1, and the removal wakes it with EIDRM, after which it calls
// semget() again and gets a new set. What stays open: a program that
// operates on a set id it got earlier without attaching (no protocol peer
// does) would find EINVAL and must re-open too. Symfony itself removes sets
// without taking #2, while holding the lock; waiters survive that the same
// way.
absl::Status SemaphoreStore::RemoveOrLeave(const Key& key, SemKeyState* st) {
  int users = semctl(st->semid, kUsageSem, GETVAL);
  if (users < 0) {
    if (IsGone(errno)) return absl::OkStatus();
    return Error(errno, key, *st, "semctl GETVAL (usage)");
  }
  if (users == 0) {
    if (semctl(st->semid, 0, IPC_RMID) == 0 || IsGone(errno)) {
      return absl::OkStatus();
    }
    // EPERM: only the set's owner, creator or root may remove it (a 0666 set
    // made by another user). It stays behind, as it would with PHP.
    if (errno != EPERM) return Error(errno, key, *st, "semctl IPC_RMID");
  }
  struct sembuf leave = {kInitSem, -1, SEM_UNDO};
  int err = SemopRetry(st->semid, &leave, 1);
  if (err != 0 && !IsGone(err)) return Error(err, key, *st, "semop (leave)");
  return absl::OkStatus();
}

// Gives back the permit (if held) and detaches in one semop that also takes
// #2, so that the count we then read cannot change under us (see
// RemoveOrLeave).
absl::Status SemaphoreStore::Detach(const Key& key, SemKeyState* st,
                                    bool release_permit) {
  const bool was_attached = st->attached;
  st->attached = false;
  st->held = false;
  if (!was_attached) return absl::OkStatus();
  struct sembuf ops[5];
  size_t n = 0;
  ops[n++] = {kInitSem, 0, 0};
  ops[n++] = {kInitSem, 1, SEM_UNDO};
  ops[n++] = {kUsageSem, -1, SEM_UNDO};
  if (release_permit) {
    ops[n++] = {kLockSem, 1, SEM_UNDO};
    // IPC_NOWAIT: a count already settled to zero by a holder that wrongly
    // took us for dead must not block the release; see CheckOwnerDeath.
    if (st->own_layout()) ops[n++] = {kHeldSem, -1, IPC_NOWAIT};
  }
  int err = SemopRetry(st->semid, ops, n);
  if (err == EAGAIN && n == 5) err = SemopRetry(st->semid, ops, n - 1);
  if (err != 0) {
    // The set is gone (Symfony or an administrator removed it): so are our
    // permit and our count, with nothing left to give back.
    if (IsGone(err)) return absl::OkStatus();
    return Error(err, key, *st, release_permit ? "semop (release)" : "semop (detach)");
  }
  return RemoveOrLeave(key, st);
}

// In our sets every acquisition adds one to #4 and every release takes one
// away, in the same semop as the permit, so #4 minus the permits taken is
// the number of holders that died since the last check. Settled under #2 so
// that two new holders do not both report (and subtract) the same death.
// Limits: a PHP holder leaves no mark in #4, so only ipclock holders' deaths
// are seen; with permits > 1, the report goes to whichever holder checks
// first after the death, not necessarily the one that got that permit.
void SemaphoreStore::CheckOwnerDeath(Key& key, SemKeyState* st, pid_t last_user) {
  key.set_previous_owner_died(false);
  if (!st->own_layout()) {
    // A guess from sempid: the last process to operate on the lock before
    // we queued for it. If it is gone now, it most likely died holding the
    // lock (Symfony removes the set on release, so a set that lived through
    // a clean release is rare). See the header for what this misses.
    key.set_previous_owner_died(last_user > 0 && last_user != getpid() &&
                                ProcessIsGone(last_user, 0));
    return;
  }
  auto dead_holders = [st]() -> int {
    unsigned short v[kOwnSems];
    SemArg arg;
    arg.array = v;
    if (semctl(st->semid, 0, GETALL, arg) != 0) return 0;
    const int permits = v[kPermitsSem] != 0 ? v[kPermitsSem] : 1;
    return static_cast<int>(v[kHeldSem]) - (permits - static_cast<int>(v[kLockSem]));
  };
  if (dead_holders() <= 0) return;
  struct sembuf enter[2] = {{kInitSem, 0, 0}, {kInitSem, 1, SEM_UNDO}};
  if (SemopRetry(st->semid, enter, 2) != 0) return;
  const int dead = dead_holders();
  if (dead > 0) {
    struct sembuf settle = {kHeldSem, static_cast<short>(-dead), IPC_NOWAIT};
    SemopRetry(st->semid, &settle, 1);
    key.set_previous_owner_died(true);
  }
  struct sembuf leave = {kInitSem, -1, SEM_UNDO};
  SemopRetry(st->semid, &leave, 1);
}

absl::StatusOr<bool> SemaphoreStore::Save(Key& key, LockMode mode,
                                          Deadline deadline) {
  if (mode != LockMode::kExclusive) {
    return StoreError(absl::StatusCode::kFailedPrecondition, describe_,
                      key.resource(), "SysV semaphores have no shared locks");
  }
  // SEM_UNDO ties the permit to this process.
  key.MarkUnserializable();
  auto* st = static_cast<SemKeyState*>(key.state(this));
  if (st == nullptr) {
    auto fresh = std::make_unique<SemKeyState>();
    st = fresh.get();
    key.set_state(this, std::move(fresh));
  }
  if (st->held) return true;
  if (key.permits() == 0 || key.permits() > kMaxPermits) {
    return StoreError(absl::StatusCode::kInvalidArgument, describe_, key.resource(),
                      absl::StrCat("permits=", key.permits(),
                                   ": a SysV semaphore holds 1 to ", kMaxPermits));
  }
  if (!st->key_known) {
    absl::StatusOr<int32_t> ipc_key = SemaphoreIpcKey(key.resource(), options_.key_scheme);
    if (!ipc_key.ok()) return ipc_key.status();
    if (*ipc_key == IPC_PRIVATE) {
      return StoreError(absl::StatusCode::kInvalidArgument, describe_,
                        key.resource(),
                        "the name hashes to IPC key 0 (IPC_PRIVATE), which the "
                        "kernel never shares between processes; rename it");
    }
    st->ipc_key = *ipc_key;
    st->key_known = true;
  }
  for (int vanished = 0; vanished < kMaxVanished; ++vanished) {
    if (!st->attached) {
      if (absl::Status s = Open(key, st); !s.ok()) return s;
      absl::StatusOr<Step> attached = Attach(key, st);
      if (!attached.ok()) return attached.status();
      if (*attached == Step::kGone) continue;
    }
    pid_t last_user = 0;
    absl::StatusOr<Step> step = Acquire(key, st, deadline, &last_user);
    if (!step.ok()) {
      Detach(key, st, false).IgnoreError();
      return step.status();
    }
    if (*step == Step::kGone) {
      // Removed while we waited (Symfony's release does that): our count
      // and undo records went with the set. Start over on a new one.
      st->attached = false;
      continue;
    }
    if (*step == Step::kBusy) {
      if (absl::Status s = Detach(key, st, false); !s.ok()) return s;
      return false;
    }
    st->held = true;
    CheckOwnerDeath(key, st, last_user);
    return true;
  }
  return StoreError(absl::StatusCode::kUnavailable, describe_, key.resource(),
                    absl::StrCat("the semaphore set was removed ", kMaxVanished,
                                 " times in a row while we waited for it"));
}

absl::Status SemaphoreStore::Delete(Key& key) {
  auto* st = static_cast<SemKeyState*>(key.state(this));
  if (st == nullptr || !st->held) return absl::OkStatus();
  return Detach(key, st, true);
}

absl::StatusOr<bool> SemaphoreStore::Exists(Key& key) {
  auto* st = static_cast<SemKeyState*>(key.state(this));
  if (st == nullptr || !st->held) return false;
  // A set removed under us (ipcrm, RemoveIPC, a Symfony peer) no longer
  // excludes anyone; a set id reused for another key would not either.
  struct semid_ds ds;
  SemArg arg;
  arg.buf = &ds;
  if (semctl(st->semid, 0, IPC_STAT, arg) != 0) {
    if (IsGone(errno)) return false;
    return Error(errno, key, *st, "semctl IPC_STAT");
  }
  return ds.sem_perm.__key == st->ipc_key;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewSemaphoreStore(
    const SemaphoreStoreOptions& options) {
  if ((options.mode & ~0777u) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("semaphore: mode %o is not a permission mode", options.mode));
  }
  // RemoveIPC guard: checked by the store factory
  return std::shared_ptr<Store>(std::make_shared<SemaphoreStore>(options));
}

absl::StatusOr<std::shared_ptr<Store>> SemaphoreStoreFromDsn(Dsn& dsn) {
  if (dsn.has_authority() || !dsn.path().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: bad DSN \"", dsn.redacted(),
        "\": semaphore takes no address, only options (semaphore:?mode=0666)"));
  }
  SemaphoreStoreOptions options;
  if (std::optional<std::string> scheme = dsn.TakeOption("key_scheme")) {
    if (*scheme == "md5") {
      options.key_scheme = SemaphoreKeyScheme::kMd5;
    } else if (*scheme == "xxh3") {
      options.key_scheme = SemaphoreKeyScheme::kXxh3;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "ipclock: bad DSN \"", dsn.redacted(), "\": key_scheme=", *scheme,
          ": expected md5 (Symfony up to 6.2) or xxh3 (Symfony 6.3 and later)"));
    }
  }
  absl::StatusOr<unsigned> mode = dsn.TakeMode("mode", options.mode);
  if (!mode.ok()) return mode.status();
  options.mode = *mode;
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  if (options.key_scheme == SemaphoreKeyScheme::kXxh3) {
    // Refuse now rather than at the first lock.
    absl::StatusOr<int32_t> probe = SemaphoreIpcKey("x", options.key_scheme);
    if (!probe.ok()) return probe.status();
  }
  return NewSemaphoreStore(options);
}

absl::StatusOr<std::vector<SemaphoreSetInfo>> ListSemaphoreSets() {
  // SEM_INFO fills a struct seminfo through the union's buf pointer.
  struct seminfo info;
  SemArg arg;
  arg.buf = reinterpret_cast<struct semid_ds*>(&info);
  const int max_index = semctl(0, 0, SEM_INFO, arg);
  if (max_index < 0) return ErrnoError(errno, kName, "", "semctl SEM_INFO");
  std::vector<SemaphoreSetInfo> out;
  for (int index = 0; index <= max_index; ++index) {
    struct semid_ds ds;
    arg.buf = &ds;
    const int semid = semctl(index, 0, SEM_STAT, arg);
    if (semid < 0) continue;  // an unused index, or a set we may not read
    const int nsems = static_cast<int>(ds.sem_nsems);
    if (nsems != kPhpSems && nsems != kOwnSems) continue;
    SemaphoreSetInfo set;
    set.ipc_key = static_cast<int32_t>(ds.sem_perm.__key);
    set.semid = semid;
    set.own_layout = nsems == kOwnSems;
    set.value = semctl(semid, kLockSem, GETVAL);
    // 0 in the record: PHP initialized the set, always for one holder.
    const int recorded = set.own_layout ? semctl(semid, kPermitsSem, GETVAL) : 1;
    set.last_pid = semctl(semid, kLockSem, GETPID);
    set.waiters = semctl(semid, kLockSem, GETNCNT);
    if (set.value < 0 || recorded < 0 || set.last_pid < 0 || set.waiters < 0) {
      continue;  // removed meanwhile
    }
    set.permits = recorded == 0 ? 1 : recorded;
    out.push_back(set);
  }
  return out;
}

}  // namespace ipclock
