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
#include "platform/errors.h"
#include "ipclock/store_interface.h"
#include "core/removeipc_guard.h"
#include "platform/proc_pid.h"
#include "platform/process_id.h"
#include "stores/sysv_semaphore_inspect.h"

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

// EIDRM: the set was removed while we slept on it. EINVAL: it was removed
// before the call (the id no longer names a set). Both mean "semget again".
bool IsGone(int err) { return err == EIDRM || err == EINVAL; }

int SemopRetry(int semid, struct sembuf* ops, size_t n) {
  for (;;) {
    if (semop(semid, ops, n) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

// Runs holding #2, after our count in #1 went. The last user removes the set
// so that a resource nobody has a Lock on leaves nothing in the kernel.
// Returns 0, or the errno of the call `*what` names.
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
int RemoveOrLeaveSet(int semid, const char** what) {
  int users = semctl(semid, kUsageSem, GETVAL);
  if (users < 0) {
    const int err = errno;
    if (IsGone(err)) return 0;
    *what = "semctl GETVAL (usage)";
    return err;
  }
  if (users == 0) {
    if (semctl(semid, 0, IPC_RMID) == 0 || IsGone(errno)) return 0;
    // EPERM: only the set's owner, creator or root may remove it (a 0666 set
    // made by another user). It stays behind, as it would with PHP.
    if (errno != EPERM) {
      *what = "semctl IPC_RMID";
      return errno;
    }
  }
  struct sembuf leave = {kInitSem, -1, SEM_UNDO};
  int err = SemopRetry(semid, &leave, 1);
  if (err != 0 && !IsGone(err)) {
    *what = "semop (leave)";
    return err;
  }
  return 0;
}

// A Key stays attached to its set from its first acquisition until it is
// destroyed, so that acquiring and releasing again is one semop each; the
// set therefore lives as long as some Lock object for the resource does,
// held or not (as a flock Lock keeps its file open).
struct SemKeyState final : KeyState {
  int32_t ipc_key = 0;
  bool key_known = false;
  int semid = -1;
  int nsems = 0;
  bool attached = false;
  bool held = false;
  // The process that attached: after fork() the child has none of the undo
  // records behind our count in #1, so the attachment is not its to use or
  // to end.
  pid_t attach_pid = 0;

  bool own_layout() const { return nsems >= kOwnSems; }

  ~SemKeyState() override;
};

// Detaches (PHP's protocol, with #2 taken in the same semop so that the
// count we then read cannot change under us) and removes the set if we were
// its last user. Nothing is reported: there is nobody to tell, and a set
// left behind by a failure here is what PHP leaves in every case.
//
// A Key destroyed while it holds a permit (a lock kept past its Lock object)
// stays attached: detaching could make us the "last user" and remove the set
// under our own permit. SEM_UNDO ends both the permit and the attachment
// when the process exits, and #4 then reports the holder as dead, as before.
SemKeyState::~SemKeyState() {
  if (!attached || held || attach_pid != CurrentPid()) return;
  struct sembuf ops[3] = {{kInitSem, 0, 0},
                          {kInitSem, 1, SEM_UNDO},
                          {kUsageSem, -1, SEM_UNDO}};
  if (SemopRetry(semid, ops, 3) != 0) return;  // gone: our count went with it
  const char* what = nullptr;
  RemoveOrLeaveSet(semid, &what);
}

class SemaphoreStore final : public StoreWithState<SemKeyState> {
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
                               Deadline deadline, pid_t* last_user,
                               bool* no_dead_holder);
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
  st->attach_pid = CurrentPid();
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
//
// For a mutex the same semop also checks that #4 is 0 before our mark (the
// permit is free, so any mark there is a dead holder's), which spares the
// GETALL of CheckOwnerDeath on every acquisition. That check carries
// IPC_NOWAIT, so a dead holder's mark turns the whole semop into EAGAIN,
// also for a waiter the kernel wakes; we then take the permit without the
// check and let CheckOwnerDeath settle the count. `*no_dead_holder` says
// whether the check passed.
absl::StatusOr<Step> SemaphoreStore::Acquire(const Key& key, SemKeyState* st,
                                             Deadline deadline,
                                             pid_t* last_user,
                                             bool* no_dead_holder) {
  *no_dead_holder = false;
  bool check_marks = st->own_layout() && key.permits() == 1;
  struct sembuf checked_ops[3] = {
      {kLockSem, -1, SEM_UNDO}, {kHeldSem, 0, IPC_NOWAIT}, {kHeldSem, 1, 0}};
  struct sembuf plain_ops[2] = {{kLockSem, -1, SEM_UNDO}, {kHeldSem, 1, 0}};
  if (!st->own_layout()) {
    // PHP's sets keep no such mark; the last pid to touch the lock is the
    // only trace a dead holder leaves (see CheckOwnerDeath).
    int pid = semctl(st->semid, kLockSem, GETPID);
    *last_user = pid > 0 ? pid : 0;
  }
  for (;;) {
    struct sembuf* ops = check_marks ? checked_ops : plain_ops;
    const size_t n = check_marks ? 3 : st->own_layout() ? 2 : 1;
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
    if (r == 0) {
      *no_dead_holder = check_marks;
      return Step::kDone;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN && check_marks) {
      // A dead holder's mark, or the deadline: the plain semop tells which
      // (ops[0] gets IPC_NOWAIT there too once the deadline has passed).
      check_marks = false;
      continue;
    }
    if (err == EAGAIN) {
      if (deadline.has_passed()) return Step::kBusy;
      continue;  // woke a hair before the deadline: wait out the rest
    }
    if (IsGone(err)) return Step::kGone;
    return Error(err, key, *st, "semop (acquire)");
  }
}

absl::Status SemaphoreStore::RemoveOrLeave(const Key& key, SemKeyState* st) {
  const char* what = "";
  if (int err = RemoveOrLeaveSet(st->semid, &what); err != 0) {
    return Error(err, key, *st, what);
  }
  return absl::OkStatus();
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
  SemKeyState* st = &EnsureState(key);
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
  if (st->attached && st->attach_pid != CurrentPid()) {
    // Forked since the attachment: it is the parent's (see SemKeyState).
    st->attached = false;
  }
  // Caveat: the set id is kept between acquisitions, and only our count in
  // #1 keeps an ipclock peer from removing the set. Symfony, ipcrm and
  // RemoveIPC remove it anyway; our next semop then fails with EINVAL and we
  // attach to whatever set the key leads to now. The kernel hands out a
  // removed set's id again only after its sequence number for that slot has
  // wrapped, so a stale id naming an unrelated set is not a practical risk.
  for (int vanished = 0; vanished < kMaxVanished; ++vanished) {
    if (!st->attached) {
      if (absl::Status s = Open(key, st); !s.ok()) return s;
      absl::StatusOr<Step> attached = Attach(key, st);
      if (!attached.ok()) return attached.status();
      if (*attached == Step::kGone) continue;
    }
    pid_t last_user = 0;
    bool no_dead_holder = false;
    absl::StatusOr<Step> step =
        Acquire(key, st, deadline, &last_user, &no_dead_holder);
    // Busy or failed, the attachment stays for the next try and ends with
    // the Key.
    if (!step.ok()) return step.status();
    if (*step == Step::kGone) {
      // Removed while we waited (Symfony's release does that): our count
      // and undo records went with the set. Start over on a new one.
      st->attached = false;
      continue;
    }
    if (*step == Step::kBusy) return false;
    st->held = true;
    if (no_dead_holder) {
      key.set_previous_owner_died(false);
    } else {
      CheckOwnerDeath(key, st, last_user);
    }
    return true;
  }
  return StoreError(absl::StatusCode::kUnavailable, describe_, key.resource(),
                    absl::StrCat("the semaphore set was removed ", kMaxVanished,
                                 " times in a row while we waited for it"));
}

absl::Status SemaphoreStore::Delete(Key& key) {
  auto* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  st->held = false;
  // The permit and our mark in #4 go back in one semop; the attachment
  // stays until the Key is destroyed.
  struct sembuf ops[2] = {{kLockSem, 1, SEM_UNDO},
                          // IPC_NOWAIT: a count already settled to zero by a
                          // holder that wrongly took us for dead must not
                          // block the release; see CheckOwnerDeath.
                          {kHeldSem, -1, IPC_NOWAIT}};
  const size_t n = st->own_layout() ? 2 : 1;
  int err = SemopRetry(st->semid, ops, n);
  if (err == EAGAIN && n == 2) err = SemopRetry(st->semid, ops, 1);
  if (err != 0) {
    if (IsGone(err)) {
      // The set is gone (Symfony or an administrator removed it): so are our
      // permit, our count and our undo records, with nothing to give back.
      st->attached = false;
      return absl::OkStatus();
    }
    return Error(err, key, *st, "semop (release)");
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SemaphoreStore::Exists(Key& key) {
  auto* st = state(key);
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
  if (absl::Status s = GuardRemoveIpc(IpcKind::kSysV, "", options.remove_ipc, kName);
      !s.ok()) {
    return s;
  }
  return std::shared_ptr<Store>(std::make_shared<SemaphoreStore>(options));
}

absl::StatusOr<std::shared_ptr<Store>> SemaphoreStoreFromDsn(Dsn& dsn,
    const StoreOptions& store_options) {
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
  absl::StatusOr<RemoveIpcPolicy> remove_ipc =
      TakeRemoveIpcPolicy(dsn, store_options.remove_ipc);
  if (!remove_ipc.ok()) return remove_ipc.status();
  options.remove_ipc = *remove_ipc;
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

const StoreDriver kSemaphoreDriver = {&SemaphoreStoreFromDsn, &ListSemaphoreLocks};

}  // namespace ipclock
