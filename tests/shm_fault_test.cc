// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shm store when the calls that make, map and lock a segment fail: out
// of descriptors (injected, and for real under RLIMIT_NOFILE), a full
// /dev/shm (injected, and for real on a small tmpfs in a mount namespace),
// and mutexes that cannot be set up, locked or unlocked. Each failure is a
// clear status naming the call; a segment this store was creating is
// removed rather than left half made; a segment that others use is never
// touched; a lock is never half held.

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/stores/shm_store.h"
#include "ipclock/store_factory.h"
#include "platform/faults.h"
#include "shm_test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::FaultPoint;
using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

absl::StatusOr<std::shared_ptr<Store>> Open(const std::string& name,
                                            absl::string_view query = "") {
  ipclock::StoreOptions options;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  return ipclock::StoreFromDsn(absl::StrCat("shm://", name, query), options);
}

// Open(name), where a failure is the test's.
std::shared_ptr<Store> OpenOrFail(const std::string& name) {
  absl::StatusOr<std::shared_ptr<Store>> store = Open(name);
  ASSERT_OK(store);
  return *store;
}

// Arms one fault, opens a new segment, and checks the refusal and that no
// segment was left behind; then opens it for real.
void RefusedCreation(FaultPoint point, int err, int skip, absl::StatusCode code,
                     absl::string_view call, absl::string_view ename) {
  const std::string name = UniqueShmName("fault");
  ipclock::InjectFault(point, err, 1, skip);
  absl::StatusOr<std::shared_ptr<Store>> store = Open(name, "?capacity=16");
  ipclock::ClearFaults();
  ASSERT_CODE(store, code);
  AssertMessageHas(store.status(), absl::StrCat("shm://", name));
  AssertMessageHas(store.status(), call);
  AssertMessageHas(store.status(), ename);
  if (ShmSegmentExists(name)) fail_msg("a half-made segment was left: %s", name.c_str());
  store = Open(name, "?capacity=16");
  ASSERT_OK(store);
  Lock lock = HeldOrFail(*store, "after");
  ASSERT_OK(ipclock::RemoveShmSegment(name));
}

void InjectedCreationFaults(void**) {
  RefusedCreation(FaultPoint::kOpen, EMFILE, 0, absl::StatusCode::kResourceExhausted,
                  "shm_open", "EMFILE");
  RefusedCreation(FaultPoint::kChmod, EPERM, 0, absl::StatusCode::kPermissionDenied,
                  "fchmod", "EPERM");
  RefusedCreation(FaultPoint::kTruncate, ENOSPC, 0, absl::StatusCode::kResourceExhausted,
                  "ftruncate", "ENOSPC");
  RefusedCreation(FaultPoint::kTruncate, ENOSPC, 1, absl::StatusCode::kResourceExhausted,
                  "ftruncate", "ENOSPC");
  RefusedCreation(FaultPoint::kMmap, ENOMEM, 0, absl::StatusCode::kResourceExhausted,
                  "mmap", "ENOMEM");
  // The table's mutex, then the mutex of the eleventh slot.
  RefusedCreation(FaultPoint::kMutexInit, EAGAIN, 0, absl::StatusCode::kUnavailable,
                  "pthread_mutex_init", "EAGAIN");
  RefusedCreation(FaultPoint::kMutexInit, ENOMEM, 11, absl::StatusCode::kResourceExhausted,
                  "pthread_mutex_init", "ENOMEM");
}

// A fault while opening a segment that another store uses leaves it as it
// was: still there, its lock still held.
void FaultsNeverHarmAnExistingSegment(void**) {
  const ScratchSegment segment("existing");
  const std::string& name = segment.name();
  std::shared_ptr<Store> first = OpenOrFail(name);
  Lock held = HeldOrFail(first, "job");
  for (FaultPoint point : {FaultPoint::kOpen, FaultPoint::kStat, FaultPoint::kMmap}) {
    for (int skip = 0; skip < 3; ++skip) {
      ipclock::InjectFault(point, EIO, 1, skip);
      absl::StatusOr<std::shared_ptr<Store>> second = Open(name);
      ipclock::ClearFaults();
      if (second.ok()) continue;  // the fault fell after the open was done
      AssertMessageHas(second.status(), "EIO");
      assert_true(ShmSegmentExists(name));
    }
  }
  absl::StatusOr<std::shared_ptr<Store>> third = Open(name);
  ASSERT_OK(third);
  Lock rival = LockOrFail(*third, "job");
  assert_false(TryOrFail(rival));
  ASSERT_OK(held.Release());
  assert_true(TryOrFail(rival));
}

// Out of descriptors for real: a child lowers RLIMIT_NOFILE and uses up
// what is left.
void RealEmfile(void**) {
  const std::string name = UniqueShmName("emfile");
  struct Result {
    int code = -1;
    char message[512] = {};
  };
  Result* result = SharedMemory<Result>();
  pid_t child = ForkChild([&] {
    struct rlimit lim = {32, 32};
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return 2;
    while (open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) {
    }
    if (errno != EMFILE) return 3;
    absl::StatusOr<std::shared_ptr<Store>> store = Open(name);
    result->code = static_cast<int>(store.status().code());
    snprintf(result->message, sizeof(result->message), "%s",
             std::string(store.status().message()).c_str());
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  assert_int_equal(result->code, static_cast<int>(absl::StatusCode::kResourceExhausted));
  AssertMessageHas(absl::ResourceExhaustedError(result->message), "shm_open");
  AssertMessageHas(absl::ResourceExhaustedError(result->message), "EMFILE");
  assert_false(ShmSegmentExists(name));
}

// A full /dev/shm for real: a 256 KiB tmpfs over /dev/shm in a mount
// namespace of a child. The segment is refused with ENOSPC at creation
// (not a SIGBUS at first touch) and nothing is left in it. Where the child
// cannot mount there without the host seeing it (or at all), `cannot` says
// why and nothing is checked.
void CheckFullDevShm(char* cannot, size_t cannot_size) {
  const std::string name = UniqueShmName("full");
  struct Result {
    char cannot[256] = {};
    int big_code = -1;
    char big_message[512] = {};
    int left = -1;
    int small_ok = -1;
  };
  Result* result = SharedMemory<Result>();
  pid_t child = ForkChild([&] {
    const char* step = nullptr;
    if (unshare(CLONE_NEWNS) != 0) {
      step = "unshare(CLONE_NEWNS)";
    } else if (!MakeHoldingMountPrivate("/dev/shm")) {
      step = errno == EINVAL ? "no mount at or above /dev/shm to make private (a chroot whose / "
                               "is not a mount point)"
                             : "making the mount that holds /dev/shm private";
    } else if (mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=256k") != 0) {
      step = "mount tmpfs on /dev/shm";
    }
    if (step != nullptr) {
      snprintf(result->cannot, sizeof(result->cannot), "%s: %s", step, strerror(errno));
      return 0;
    }
    // About 1.3 MB of slots.
    absl::StatusOr<std::shared_ptr<Store>> big = Open(name, "?capacity=4096");
    result->big_code = static_cast<int>(big.status().code());
    snprintf(result->big_message, sizeof(result->big_message), "%s",
             std::string(big.status().message()).c_str());
    result->left = ShmSegmentExists(name) ? 1 : 0;
    absl::StatusOr<std::shared_ptr<Store>> small = Open(name, "?capacity=64");
    if (small.ok()) {
      absl::StatusOr<Lock> lock = Lock::Create(*small, "job");
      result->small_ok = lock.ok() && lock->TryAcquire().value_or(false) ? 1 : 0;
    } else {
      result->small_ok = 0;
    }
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  if (result->cannot[0] != '\0') {
    snprintf(cannot, cannot_size, "%s", result->cannot);
    return;
  }
  assert_int_equal(result->big_code, static_cast<int>(absl::StatusCode::kResourceExhausted));
  AssertMessageHas(absl::ResourceExhaustedError(result->big_message), "ENOSPC");
  assert_int_equal(result->left, 0);
  assert_int_equal(result->small_ok, 1);
  assert_false(ShmSegmentExists(name));  // the namespace's tmpfs is gone
}

void RealFullDevShm(void**) {
  SKIP_UNLESS_ROOT();
  char cannot[256] = {};
  CheckFullDevShm(cannot, sizeof(cannot));  // its objects are gone before a skip
  if (cannot[0] != '\0') {
    fprintf(stderr, "%s: cannot mount a tmpfs on /dev/shm in a namespace of its own here (%s); "
            "skipped\n", __func__, cannot);
    skip();
  }
}

// Locking and unlocking that fail leave the lock exactly as it was.
void MutexLockFaults(void**) {
  const ScratchSegment segment("lockfault");
  const std::string& name = segment.name();
  std::shared_ptr<Store> store = OpenOrFail(name);
  Lock lock = LockOrFail(store, "job");
  Lock rival = LockOrFail(store, "job");
  // A first acquisition (the slot table's mutex) and a later one (the
  // slot's).
  for (int round = 0; round < 2; ++round) {
    ipclock::InjectFault(FaultPoint::kMutexLock, EINVAL);
    absl::StatusOr<bool> got = lock.TryAcquire();
    ipclock::ClearFaults();
    ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
    AssertMessageHas(got.status(), "EINVAL");
    assert_false(lock.is_acquired());
    assert_true(TryOrFail(rival));  // nothing was left held
    ASSERT_OK(rival.Release());
    if (round == 0) {
      TakeAndRelease(lock);
    }
  }
  // An unlock that fails keeps the lock held, by this Lock: the next
  // acquisition finds it held and the next release lets it go.
  assert_true(TryOrFail(lock));
  ipclock::InjectFault(FaultPoint::kMutexLock, EPERM);
  absl::Status released = lock.Release();
  ipclock::ClearFaults();
  ASSERT_CODE(released, absl::StatusCode::kPermissionDenied);
  AssertMessageHas(released, "pthread_mutex_unlock");
  assert_false(TryOrFail(rival));
  TakeAndRelease(lock);
  TakeAndRelease(rival);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(InjectedCreationFaults),
      cmocka_unit_test(FaultsNeverHarmAnExistingSegment),
      cmocka_unit_test(RealEmfile),
      cmocka_unit_test(RealFullDevShm),
      cmocka_unit_test(MutexLockFaults),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
