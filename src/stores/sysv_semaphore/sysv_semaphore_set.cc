// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/sysv_semaphore/sysv_semaphore_set.h"

#include <errno.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "core/store_errors.h"
#include "platform/coarse_clock.h"
#include "platform/errors.h"
#include "platform/proc_pid.h"
#include "platform/process_id.h"
#include "platform/sysv_sem.h"

namespace ipclock {

namespace {

// Sets removed under one attachment before we call it a livelock. Symfony
// removes a set on every release, so a busy resource shared with PHP makes
// a waiter re-attach once per release it sees, never thousands of times in
// a row.
constexpr int kMaxVanished = 10000;

absl::Status Error(const SysvContext& ctx, int err, int32_t ipc_key,
                   absl::string_view what) {
  return ErrnoError(err, ctx.describe, ctx.resource,
                    absl::StrFormat("%s (IPC key %d)", what, ipc_key));
}

absl::Status Removed(const SysvContext& ctx, const SysvAttachment& att,
                     absl::string_view how) {
  return LostError(ctx.describe, ctx.resource,
                   absl::StrFormat("semaphore set %d (key %d) %s", att.semid,
                                   att.ipc_key, how));
}

// Lets go of #2. Failing, #2 would stay taken until this process exits
// (SEM_UNDO) and every attacher of the resource would wait until then, so
// a failure other than the set's removal is tried again a few times.
int LeaveInit(int semid) {
  struct sembuf leave = {kSysvInitSem, -1, SEM_UNDO};
  int err = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    err = SysvSemOp(semid, &leave, 1);
    if (err == 0 || SysvSetGone(err)) return 0;
  }
  return err;
}

// Runs holding #2, after our count in #1 went. The last user removes the set
// so that a resource nobody uses leaves nothing in the kernel. Returns 0, or
// the errno of the call `*what` names.
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
//
// A set whose #4 still counts a dead holder's acquisition stays: nobody is
// attached, so every permit is back and every count in #4 is a death that
// no holder has been told of yet, and a new set would know of none.
int RemoveOrLeaveSet(int semid, const char** what) {
  int users = 0;
  if (int err = SysvGetVal(semid, kSysvUsageSem, &users); err != 0) {
    if (SysvSetGone(err)) return 0;
    *what = "semctl GETVAL (usage)";
    return err;
  }
  if (users == 0) {
    unsigned short v[kSysvOwnSems];
    int nsems = 0;
    if (int err = SysvGetAll(semid, v, kSysvOwnSems, &nsems); err != 0) {
      if (SysvSetGone(err)) return 0;
      *what = "semctl GETALL";
      return err;
    }
    if (nsems == kSysvOwnSems && v[kSysvHeldSem] > 0) users = -1;  // a death untold
  }
  if (users == 0) {
    const int err = SysvRemove(semid);
    if (err == 0 || SysvSetGone(err)) return 0;
    // EPERM: only the set's owner, creator or root may remove it (a 0666 set
    // made by another user). It stays behind, as it would with PHP.
    if (err != EPERM) {
      *what = "semctl IPC_RMID";
      return err;
    }
  }
  if (int err = LeaveInit(semid); err != 0) {
    *what = "semop (leave)";
    return err;
  }
  return 0;
}

// Finds the set of `ipc_key`, creating one in ipclock's layout if there is
// none. Sets are created with five semaphores; semget() asking for more
// semaphores than an existing set has fails with EINVAL: that is a set PHP
// made first (three), which we then open with PHP's count. PHP's own
// semget(key, 3) on one of our sets succeeds, since asking for fewer is
// allowed.
//
// semget(key, 5) also succeeds on a larger set that another program made
// under the key. The size of a set decides how much GETALL writes, so it is
// measured here (IPC_STAT, once per attachment) and anything but the two
// layouts is refused.
absl::Status OpenSet(const SysvContext& ctx, int32_t ipc_key, mode_t mode,
                     SysvAttachment* att) {
  for (int i = 0; i < kMaxVanished; ++i) {
    int id = -1;
    int err = SysvSemGet(ipc_key, kSysvOwnSems, IPC_CREAT | static_cast<int>(mode), &id);
    if (err == EINVAL) {
      err = SysvSemGet(ipc_key, kSysvPhpSems, 0, &id);
      if (err == ENOENT) continue;  // removed between the two calls
      if (err != 0) return Error(ctx, err, ipc_key, "semget (a set made by another program)");
    } else if (err != 0) {
      return Error(ctx, err, ipc_key, "semget");
    }
    SysvSetStat st;
    err = SysvStat(id, &st);
    if (SysvSetGone(err)) continue;
    if (err != 0) return Error(ctx, err, ipc_key, "semctl IPC_STAT");
    if (st.nsems != kSysvOwnSems && st.nsems != kSysvPhpSems) {
      return MisuseError(ctx.describe, ctx.resource,
                         absl::StrFormat("the SysV semaphore set %d under IPC key %d has %d "
                                         "semaphores: neither PHP's layout (3) nor "
                                         "ipclock's (5); another program uses this key",
                                         id, ipc_key, st.nsems));
    }
    att->semid = id;
    att->nsems = st.nsems;
    return absl::OkStatus();
  }
  return TransientError(ctx.describe, ctx.resource,
                        absl::StrCat("the semaphore set was removed ", kMaxVanished,
                                     " times while being opened"));
}

// Runs holding #2, counted in #1. The first user sets the permits; later
// users must agree.
//
// Owner death of a foreign holder. ipclock operates on #0 and #4 in one
// semop, so the kernel names the same process as the last to operate on
// each (GETPID); a set made by PHP has no #4. When the last process to
// operate on #0 is not the last on #4, a program that is not ipclock (PHP)
// took or released the lock last, or the kernel undid a dead PHP holder's
// acquisition. That pid is read here, before our SETVAL would make us the
// last user, and judged at our first acquisition (CheckOwnerDeath).
absl::Status InitOrCheckPermits(const SysvContext& ctx, uint32_t permits,
                                SysvAttachment* att) {
  const int semid = att->semid;
  int users = 0;
  if (int err = SysvGetVal(semid, kSysvUsageSem, &users); err != 0) {
    return Error(ctx, err, att->ipc_key, "semctl GETVAL (usage)");
  }
  pid_t lock_pid = 0;
  pid_t held_pid = 0;
  if (int err = SysvGetPid(semid, kSysvLockSem, &lock_pid); err != 0) {
    return Error(ctx, err, att->ipc_key, "semctl GETPID");
  }
  if (att->own_layout()) {
    if (int err = SysvGetPid(semid, kSysvHeldSem, &held_pid); err != 0) {
      return Error(ctx, err, att->ipc_key, "semctl GETPID (held)");
    }
  }
  att->foreign_last_user =
      lock_pid > 0 && lock_pid != held_pid && lock_pid != CurrentPid() ? lock_pid : 0;
  if (users == 1) {
    if (!att->own_layout() && permits != 1) {
      return ConfigurationError(
          ctx.describe, ctx.resource,
          absl::StrCat("permits=", permits, " needs a set made by ipclock, "
                       "but another program (PHP) made this one with ",
                       att->nsems, " semaphores: it can only be a mutex"));
    }
    // SETVAL clears every process's undo adjustment for that semaphore.
    // Harmless here: we are the only process attached, so nobody holds a
    // permit whose undo could be lost.
    if (int err = SysvSetVal(semid, kSysvLockSem, static_cast<int>(permits)); err != 0) {
      return Error(ctx, err, att->ipc_key, "semctl SETVAL (permits)");
    }
    if (att->own_layout()) {
      if (int err = SysvSetVal(semid, kSysvPermitsSem, static_cast<int>(permits)); err != 0) {
        return Error(ctx, err, att->ipc_key, "semctl SETVAL (permits record)");
      }
      // The marks of dead holders stay (the next holder is told of them);
      // writing the value back makes us the last to operate on #4 as on #0,
      // so that our SETVAL of #0 is not taken for a foreign holder's work.
      int held = 0;
      int err = SysvGetVal(semid, kSysvHeldSem, &held);
      if (err == 0) err = SysvSetVal(semid, kSysvHeldSem, held);
      if (err != 0) return Error(ctx, err, att->ipc_key, "semctl GETVAL/SETVAL (held)");
    }
    return absl::OkStatus();
  }
  // 0 in the record: PHP initialized the set, always for one holder
  // (Symfony calls sem_get() with its default max_acquire of 1).
  int recorded = 1;
  if (att->own_layout()) {
    if (int err = SysvGetVal(semid, kSysvPermitsSem, &recorded); err != 0) {
      return Error(ctx, err, att->ipc_key, "semctl GETVAL (permits)");
    }
    if (recorded == 0) recorded = 1;
  }
  if (static_cast<uint32_t>(recorded) != permits) {
    return ConfigurationError(
        ctx.describe, ctx.resource,
        absl::StrCat("permits=", permits, " but the processes already using "
                     "this semaphore set made it with permits=", recorded));
  }
  return absl::OkStatus();
}

// A weight is at most the permits, at most SEMVMX: it fits a sem_op.
short Weight(const SysvAttachment& att) { return static_cast<short>(att.weight); }

bool Gone(pid_t pid) { return pid > 0 && pid != CurrentPid() && ProcessIsGone(pid, 0); }

// In our sets every acquisition adds one to #4 and every release takes one
// away, in the same semop as the permit, so #4 minus the permits taken is
// the number of holders that died since the last check. Settled under #2 so
// that two new holders do not both report (and subtract) the same death.
// With permits > 1, the report goes to whichever holder checks first after
// the death, not necessarily the one that got that permit.
//
// A foreign holder (PHP) leaves no mark in #4: `suspect` is the process
// that last operated on the lock semaphore without being an ipclock holder
// (read at attachment or before our wait). Gone now that we hold the
// permit, it died holding it: the kernel gave its permit back while it
// exited, which ProcessIsGone() sees. That is a guess where PHP released
// the lock without removing the set (Symfony always removes it) and then
// exited, and it misses a foreign holder that died while we were attached
// but not waiting.
bool CheckOwnerDeath(SysvAttachment* att, bool marks_checked, pid_t suspect) {
  if (!att->own_layout() || marks_checked) return Gone(suspect);
  const int semid = att->semid;
  auto dead_holders = [semid]() -> int {
    unsigned short v[kSysvOwnSems];
    int nsems = 0;
    if (SysvGetAll(semid, v, kSysvOwnSems, &nsems) != 0 || nsems != kSysvOwnSems) return 0;
    const int permits = v[kSysvPermitsSem] != 0 ? v[kSysvPermitsSem] : 1;
    return static_cast<int>(v[kSysvHeldSem]) -
           (permits - static_cast<int>(v[kSysvLockSem]));
  };
  if (dead_holders() <= 0) return Gone(suspect);
  struct sembuf enter[2] = {{kSysvInitSem, 0, 0}, {kSysvInitSem, 1, SEM_UNDO}};
  if (SysvSemOp(semid, enter, 2) != 0) return Gone(suspect);
  const int dead = dead_holders();
  if (dead > 0) {
    // At most SEMVMX, what a semaphore holds.
    const short settled = static_cast<short>(dead > 32767 ? 32767 : dead);
    struct sembuf settle = {kSysvHeldSem, static_cast<short>(-settled), IPC_NOWAIT};
    // A failure leaves the marks for the next holder, who is then told.
    (void)SysvSemOp(semid, &settle, 1);
  }
  // Failing even when tried again, #2 stays taken until this process exits;
  // nothing better can be done about it here.
  (void)LeaveInit(semid);
  return dead > 0 || Gone(suspect);
}

// Gives back the `taken` permits (and marks) of a reservation that did not
// get them all. Told of a death on the way, it leaves those marks, so that
// the holder that next takes the permits is told instead.
void GiveBackReserved(SysvAttachment* att, int taken, bool died) {
  if (taken == 0) return;
  struct sembuf ops[2] = {{kSysvLockSem, static_cast<short>(taken), SEM_UNDO},
                          {kSysvHeldSem, static_cast<short>(-taken), IPC_NOWAIT}};
  const size_t n = att->own_layout() && !died ? 2 : 1;
  if (SysvSemOp(att->semid, ops, n) == EAGAIN && n == 2) (void)SysvSemOp(att->semid, ops, 1);
}

// A wait for a weight W > 1. Linux serves a semop that can proceed at
// once, however many wait before it, so a wait for W permits in one semop
// starves behind holders of one permit that come and go: W are never free
// together. Instead the permits are taken one at a time, each in the
// kernel's queue with the other waiters, and kept, until there are W.
// Two such waiters could each keep some and wait for the rest forever:
// a waiter that gets no further permit within its slice gives back what it
// kept and starts again with a longer slice (doubled, with a jitter of the
// pid, so two such waiters do not give back in step). A slice that
// outlasts the holders' hold gets all W, so holders of one permit,
// however many, cannot keep a waiter out. Permits kept while waiting count
// as held: a waiter killed meanwhile is a dead holder to the next one.
absl::StatusOr<SysvStep> ReserveOneByOne(const SysvContext& ctx, SysvAttachment* att,
                                         Deadline deadline, pid_t suspect,
                                         bool* previous_owner_died) {
  const int weight = static_cast<int>(att->weight);
  const size_t n = att->own_layout() ? 2 : 1;
  absl::Duration slice = absl::Milliseconds(5 + CurrentPid() % 5);
  int taken = 0;
  bool died = false;
  while (taken < weight) {
    struct sembuf one[2] = {{kSysvLockSem, -1, SEM_UNDO}, {kSysvHeldSem, 1, 0}};
    const absl::Duration wait = std::min(slice, deadline.Remaining());
    struct timespec ts = absl::ToTimespec(wait);
    const int err = SysvSemTimedOp(att->semid, one, n, &ts);
    if (err == 0) {
      ++taken;
      died = CheckOwnerDeath(att, /*marks_checked=*/false, suspect) || died;
      continue;
    }
    if (err == EINTR) continue;
    if (SysvSetGone(err)) return SysvStep::kGone;  // what we kept went with it
    if (err != EAGAIN) {
      GiveBackReserved(att, taken, died);
      return Error(ctx, err, att->ipc_key, "semop (acquire)");
    }
    if (deadline.has_passed()) {
      GiveBackReserved(att, taken, died);
      return SysvStep::kBusy;
    }
    GiveBackReserved(att, taken, died);
    taken = 0;
    died = false;
    slice = slice * 2 + absl::Milliseconds(CurrentPid() % 5);
  }
  *previous_owner_died = died;
  return SysvStep::kDone;
}

}  // namespace

absl::Status AttachSet(const SysvContext& ctx, int32_t ipc_key, mode_t mode,
                       uint32_t permits, SysvAttachment* att) {
  att->ipc_key = ipc_key;
  for (int vanished = 0; vanished < kMaxVanished; ++vanished) {
    att->semid = -1;
    if (absl::Status s = OpenSet(ctx, ipc_key, mode, att); !s.ok()) return s;
    // PHP's sem_get(): take the init semaphore and count ourselves in with
    // one semop, initialize the lock if we are the only user, let go of the
    // init semaphore. While we hold #2 nobody else can attach, initialize,
    // or (being ipclock) detach and remove the set.
    struct sembuf enter[3] = {{kSysvInitSem, 0, 0},
                              {kSysvInitSem, 1, SEM_UNDO},
                              {kSysvUsageSem, 1, SEM_UNDO}};
    int err = SysvSemOp(att->semid, enter, 3);
    if (SysvSetGone(err)) continue;
    if (err != 0) return Error(ctx, err, ipc_key, "semop (attach)");
    att->attach_pid = CurrentPid();
    absl::Status checked = InitOrCheckPermits(ctx, permits, att);
    if (!checked.ok()) {
      // Symfony removes sets without taking #2, so the set may have vanished
      // under the check itself.
      if (!SetStillOurs(*att)) continue;
      struct sembuf out = {kSysvUsageSem, -1, SEM_UNDO};
      if (SysvSemOp(att->semid, &out, 1) == 0) {
        const char* what = nullptr;
        (void)RemoveOrLeaveSet(att->semid, &what);
      }
      att->semid = -1;
      return checked;
    }
    err = LeaveInit(att->semid);
    if (err != 0) {
      // Still counted in #1 and holding #2: both end when this process
      // does (SEM_UNDO). Attachers of this resource wait until then.
      att->semid = -1;
      return Error(ctx, err, ipc_key, "semop (end of attach)");
    }
    att->permits = permits;
    att->proven_at = CoarseMonotonicNanos();
    return absl::OkStatus();
  }
  return TransientError(ctx.describe, ctx.resource,
                        absl::StrCat("the semaphore set was removed ", kMaxVanished,
                                     " times in a row while we attached to it"));
}

// Detaches (PHP's protocol, with #2 taken in the same semop so that the
// count we then read cannot change under us) and removes the set if we were
// its last user.
//
// Caveat: IPC_NOWAIT on #1. A count of 0 there means ours was wiped (a
// SETVAL or SETALL by someone else): waiting for it to go up would hang
// the Lock's destruction for good, so the attachment is just dropped.
void DetachSet(SysvAttachment* att) {
  if (!att->attached() || att->attach_pid != CurrentPid()) return;
  struct sembuf ops[3] = {{kSysvInitSem, 0, 0},
                          {kSysvInitSem, 1, SEM_UNDO},
                          {kSysvUsageSem, -1, SEM_UNDO | IPC_NOWAIT}};
  // Else gone (our count went with it), or our count was wiped.
  if (SysvSemOp(att->semid, ops, 3) == 0) {
    const char* what = nullptr;
    (void)RemoveOrLeaveSet(att->semid, &what);
  }
  att->semid = -1;
}

void AbandonLostPermit(SysvAttachment* att) {
  if (!att->attached() || att->attach_pid != CurrentPid()) return;
  if (!SetStillOurs(*att)) {
    att->semid = -1;
    return;
  }
  // Reset under us: the permit is not ours to give back (that would make
  // one permit too many), but our mark in #4 is, or the next holder would
  // be told of a death that did not happen.
  if (att->own_layout()) {
    struct sembuf unmark = {kSysvHeldSem, static_cast<short>(-Weight(*att)), IPC_NOWAIT};
    (void)SysvSemOp(att->semid, &unmark, 1);
  }
  DetachSet(att);
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
// check and let CheckOwnerDeath settle the count.
//
// The first try never waits: when the permit is free that one semop is the
// whole cost. Only a busy lock pays for reading who holds it. A wait that
// follows a try of the Lock's skips its own (the EAGAIN it would get is
// taken as read): a blocking semop takes a permit that is free as well.
absl::StatusOr<SysvStep> AcquirePermit(const SysvContext& ctx, SysvAttachment* att,
                                       Deadline deadline, bool tried_just_now,
                                       bool* previous_owner_died) {
  *previous_owner_died = false;
  const int semid = att->semid;
  const bool own = att->own_layout();
  const pid_t self = CurrentPid();
  pid_t suspect = att->foreign_last_user;
  att->foreign_last_user = 0;
  if (!own) {
    // A set PHP made keeps no marks: the last process to operate on the
    // lock is the only trace a dead holder leaves. Ours (our SETVAL when
    // attaching, or our last release) says nothing new.
    pid_t last = 0;
    const int err = SysvGetPid(semid, kSysvLockSem, &last);
    if (SysvSetGone(err)) return SysvStep::kGone;
    if (err != 0) return Error(ctx, err, att->ipc_key, "semctl GETPID");
    if (last > 0 && last != self) suspect = last;
  }
  bool skip_try = tried_just_now && !deadline.has_passed();
  bool check_marks = own && att->permits == 1 && !skip_try;
  // A weight of W takes W permits and leaves W marks, all or none, in the
  // same semop: the kernel applies a semop's operations atomically, and a
  // dead holder's SEM_UNDO gives all W back at once.
  const short weight = Weight(*att);
  struct sembuf checked_ops[3] = {{kSysvLockSem, -1, SEM_UNDO | IPC_NOWAIT},
                                  {kSysvHeldSem, 0, IPC_NOWAIT},
                                  {kSysvHeldSem, 1, 0}};
  struct sembuf plain_ops[2] = {{kSysvLockSem, static_cast<short>(-weight), SEM_UNDO | IPC_NOWAIT},
                                {kSysvHeldSem, weight, 0}};
  const size_t plain_n = own ? 2 : 1;
  bool waited = false;
  for (;;) {
    struct sembuf* ops = check_marks ? checked_ops : plain_ops;
    const size_t n = check_marks ? 3 : plain_n;
    int err;
    if (skip_try) {
      skip_try = false;
      err = EAGAIN;
    } else if (!waited || deadline.has_passed()) {
      ops[0].sem_flg = SEM_UNDO | IPC_NOWAIT;
      err = SysvSemOpOnce(semid, ops, n);
    } else {
      ops[0].sem_flg = SEM_UNDO;
      if (deadline.is_never()) {
        err = SysvSemOpOnce(semid, ops, n);
      } else {
        // semtimedop measures a relative timeout on CLOCK_MONOTONIC; taking
        // it from the deadline on every pass keeps EINTR restarts within
        // the caller's total.
        struct timespec ts = absl::ToTimespec(deadline.Remaining());
        err = SysvSemTimedOp(semid, ops, n, &ts);
      }
    }
    if (err == 0) {
      *previous_owner_died = CheckOwnerDeath(att, check_marks, suspect);
      return SysvStep::kDone;
    }
    if (err == EINTR) continue;
    if (SysvSetGone(err)) return SysvStep::kGone;
    if (err != EAGAIN) return Error(ctx, err, att->ipc_key, "semop (acquire)");
    if (check_marks) {
      // A dead holder's mark, or a busy lock: the plain semop tells which.
      check_marks = false;
      continue;
    }
    if (deadline.has_passed()) return SysvStep::kBusy;
    if (!waited) {
      // About to sleep. Who has the lock? See InitOrCheckPermits: a last
      // operation on #0 that #4 does not share is a foreign holder's.
      waited = true;
      check_marks = own && att->permits == 1;
      pid_t lock_pid = 0;
      pid_t held_pid = 0;
      int e = SysvGetPid(semid, kSysvLockSem, &lock_pid);
      if (e == 0 && own) e = SysvGetPid(semid, kSysvHeldSem, &held_pid);
      if (SysvSetGone(e)) return SysvStep::kGone;
      if (e != 0) return Error(ctx, e, att->ipc_key, "semctl GETPID");
      if (lock_pid > 0 && lock_pid != self && (!own || lock_pid != held_pid)) {
        suspect = lock_pid;
      }
      if (weight > 1) return ReserveOneByOne(ctx, att, deadline, suspect, previous_owner_died);
    }
  }
}

absl::Status ReleasePermit(const SysvContext& ctx, SysvAttachment* att, bool died) {
  // The permit and our mark in #4 go back in one semop. IPC_NOWAIT on #4: a
  // count already settled to zero by a holder that wrongly took us for dead
  // must not block the release.
  struct sembuf ops[2] = {{kSysvLockSem, Weight(*att), SEM_UNDO},
                          {kSysvHeldSem, static_cast<short>(-Weight(*att)), IPC_NOWAIT}};
  const size_t n = att->own_layout() && !died ? 2 : 1;
  int err = SysvSemOp(att->semid, ops, n);
  if (err == EAGAIN && n == 2) err = SysvSemOp(att->semid, ops, 1);
  if (SysvSetGone(err)) {
    // ipcrm, RemoveIPC, or a peer that ignored our permit: our permit, our
    // count and our undo records went with the set.
    absl::Status lost = Removed(ctx, *att, "was removed while the lock was held");
    att->semid = -1;
    return lost;
  }
  if (err != 0) return Error(ctx, err, att->ipc_key, "semop (release)");
  return absl::OkStatus();
}

absl::Status CheckSetHeld(const SysvContext& ctx, const SysvAttachment& att) {
  SysvSetStat st;
  int err = SysvStat(att.semid, &st);
  if (SysvSetGone(err)) return Removed(ctx, att, "was removed");
  if (err != 0) return Error(ctx, err, att.ipc_key, "semctl IPC_STAT");
  if (st.key != att.ipc_key || st.nsems != att.nsems) {
    return Removed(ctx, att, absl::StrFormat("was removed (the id now names a set of key %d)",
                                             st.key));
  }
  // Still the set; is our permit still taken in it? A SETVAL or SETALL by
  // someone else gives it away without removing anything.
  unsigned short v[kSysvOwnSems];
  int nsems = 0;
  err = SysvGetAll(att.semid, v, kSysvOwnSems, &nsems);
  if (SysvSetGone(err)) return Removed(ctx, att, "was removed");
  if (err != 0) return Error(ctx, err, att.ipc_key, "semctl GETALL");
  if (v[kSysvUsageSem] == 0 || v[kSysvLockSem] + att.weight > att.permits) {
    return Removed(ctx, att,
                   absl::StrFormat("was reset by another process (semval %d of %d "
                                   "permits while we hold %d, %d attached)",
                                   v[kSysvLockSem], att.permits, att.weight,
                                   v[kSysvUsageSem]));
  }
  return absl::OkStatus();
}

bool SetStillOurs(const SysvAttachment& att) {
  SysvSetStat st;
  return SysvStat(att.semid, &st) == 0 && st.key == att.ipc_key && st.nsems == att.nsems;
}

}  // namespace ipclock
