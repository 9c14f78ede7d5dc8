// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The flock store's holder record: its format, fences that never go back,
// owner death through the mapped record, a truncation of a mapped lock file
// (which must not crash the holder), another process rewriting the record
// while we read it, and the system calls under it failing as the kernel
// would make them fail (ENOSPC, EIO, EINTR, EMFILE, ENOLCK, a short write).

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/lock.h"
#include "platform/faults.h"
#include "stores/flock/flock_record.h"
#include "flock_test_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::FaultPoint;
using ipclock::FlockRecordFields;
using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

ipclock::FlockStoreOptions NoMapping() {
  ipclock::FlockStoreOptions o;
  o.map_record = false;
  return o;
}

// The record as another process reads it; fields zero if there is none.
FlockRecordFields RecordOf(const std::string& path, size_t* size = nullptr) {
  FlockRecordFields f;
  char buf[64];
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_msg("open %s", path.c_str());
  ssize_t n = pread(fd, buf, sizeof(buf), 0);
  struct stat st;
  fstat(fd, &st);
  close(fd);
  if (size != nullptr) *size = static_cast<size_t>(st.st_size);
  if (n == 64 && !ipclock::ParseFlockRecord(buf, &f)) f = FlockRecordFields();
  return f;
}

// Whether this process maps `path` (the store's record page): the tests of
// the mapped record check that they do test it.
bool IsMapped(const std::string& path) {
  FILE* maps = fopen("/proc/self/maps", "re");
  if (maps == nullptr) return false;
  char line[4096];
  bool found = false;
  while (!found && fgets(line, sizeof(line), maps) != nullptr) {
    found = absl::StrContains(line, path);
  }
  fclose(maps);
  return found;
}

bool Has(const absl::Status& s, absl::string_view text) {
  return absl::StrContains(s.message(), text);
}

// --- Format -------------------------------------------------------------------

void FormatAndParse(void**) {
  char buf[64];
  FlockRecordFields f{12345678901234567890ull, true, 4194304};
  ipclock::FormatFlockRecord(f, buf);
  assert_memory_equal(buf, "ipclock-flock/1 fence=12345678901234567890 held=1 pid=004194304\n",
                      64);
  FlockRecordFields back;
  assert_true(ipclock::ParseFlockRecord(buf, &back));
  assert_true(back.fence == f.fence && back.held && back.pid == 4194304);

  // An update from a known record changes only what differs, and gives the
  // same bytes as formatting afresh, carries included.
  for (uint64_t fence : {0ull, 8ull, 9ull, 99ull, 1999ull, 18446744073709551614ull}) {
    FlockRecordFields base{fence, false, 77};
    char updated[64], fresh[64];
    ipclock::FormatFlockRecord(base, updated);
    FlockRecordFields next{fence + 1, true, 78};
    ipclock::UpdateFlockRecord(updated, base, next);
    ipclock::FormatFlockRecord(next, fresh);
    assert_memory_equal(updated, fresh, 64);
    FlockRecordFields release{fence + 1, false, 78};
    ipclock::UpdateFlockRecord(updated, next, release);
    ipclock::FormatFlockRecord(release, fresh);
    assert_memory_equal(updated, fresh, 64);
    FlockRecordFields jump{fence / 3, true, 78};
    ipclock::UpdateFlockRecord(updated, release, jump);
    ipclock::FormatFlockRecord(jump, fresh);
    assert_memory_equal(updated, fresh, 64);
  }

  // Anything else is no record: more than 64 bits, a bad mark, a sign,
  // damaged labels, another length.
  const char* bad[] = {
      "ipclock-flock/1 fence=18446744073709551616 held=1 pid=000000001\n",
      "ipclock-flock/1 fence=00000000000000000001 held=2 pid=000000001\n",
      "ipclock-flock/1 fence=+0000000000000000001 held=1 pid=000000001\n",
      "ipclock-flock/1 fence=00000000000000000001 hold=1 pid=000000001\n",
      "ipclock-flock/1 fence=00000000000000000001 held=1 pid=00000000x\n",
      "ipclock-flock/1 fence=00000000000000000001 held=1 pid=000000001 ",
  };
  for (const char* b : bad) assert_false(ipclock::ParseFlockRecord(b, &back));
}

// The resource's name after the record: what fits before the queue, read
// back only from a whole block.
void NameBlock(void**) {
  const std::string name = "multi word/\xd0\xba\0x";
  const std::string block = ipclock::FormatFlockName(name);
  std::string head(64, '\0');
  head += block;
  assert_true(ipclock::ParseFlockName(head) == name);
  assert_false(ipclock::ParseFlockName(head.substr(0, head.size() - 1)).has_value());
  assert_false(ipclock::ParseFlockName(std::string(64, '\0') + "ipclock-name/1 0x3\nabc")
                   .has_value());
  assert_false(ipclock::ParseFlockName("").has_value());
  assert_int_equal(ipclock::FormatFlockName(std::string(173, 'a')).size(), 192);
  assert_true(ipclock::FormatFlockName(std::string(174, 'a')).empty());
}

// --- Fences and owner death through the mapped record -------------------------------

// A Lock reused in one process (its record mapped after the first
// acquisition) and fresh Locks in other processes (pread/pwrite) take turns:
// the fence grows by one every time, whoever reads it.
void FencesGrowAcrossMappedAndPlainHolders(void**) {
  const std::string dir = MakeTempDir();
  auto store = FlockStoreIn(dir);
  const std::string r = UniqueResource("turns");
  Lock reused = LockOrFail(store, r);
  uint64_t expected = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 3; ++i) {
      assert_true(TryOrFail(reused));
      assert_int_equal(*reused.fence(), ++expected);
      ASSERT_OK(reused.Release());
    }
    assert_true(IsMapped(FlockFileOf(dir, r)));
    const uint64_t want = ++expected;
    assert_int_equal(WaitChild(ForkChild([&] {
                       auto own = FlockStoreIn(dir, NoMapping());
                       absl::StatusOr<Lock> l = Lock::Create(own, r);
                       if (!l.ok() || !l->TryAcquire().value_or(false)) return 2;
                       return l->fence() == want ? 0 : 3;
                     })),
                     0);
  }
  FlockRecordFields last = RecordOf(FlockFileOf(dir, r));
  assert_int_equal(last.fence, expected);
  assert_false(last.held);
}

// A holder killed with SIGKILL while its record is mapped: the next holder
// learns it died, and the fence goes on.
void KilledMappedHolderIsReported(void**) {
  const std::string dir = MakeTempDir();
  const std::string r = UniqueResource("killed");
  Signal holding;
  pid_t holder = ForkChild([&] {
    auto store = FlockStoreIn(dir);
    absl::StatusOr<Lock> l = Lock::Create(store, r);
    if (!l.ok()) return 2;
    for (int i = 0; i < 3; ++i) {  // mapped from the second on
      if (!l->TryAcquire().value_or(false)) return 3;
      if (i < 2 && !l->Release().ok()) return 4;
    }
    if (!IsMapped(FlockFileOf(dir, r))) return 5;
    holding.Notify();
    pause();
    return 0;
  });
  assert_int_equal(holding.Wait(), 'x');
  assert_int_equal(kill(holder, SIGKILL), 0);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  auto store = FlockStoreIn(dir);
  Lock next = HeldOrFail(store, r);
  assert_true(next.previous_owner_died());
  assert_int_equal(*next.fence(), 4);
}

// `exec 9>file`, as flock(1)'s manual shows, truncates the lock file. The
// holder's record page is then past the end of the file: touching it raises
// SIGBUS, which must not kill the holder. Its release writes the whole
// record back, so that fences do not go back.
void TruncatedMappedFileDoesNotCrash(void**) {
  const std::string dir = MakeTempDir();
  const std::string r = UniqueResource("truncated");
  const std::string path = FlockFileOf(dir, r);
  Signal holding, truncated;
  pid_t holder = ForkChild([&] {
    auto store = FlockStoreIn(dir);
    absl::StatusOr<Lock> l = Lock::Create(store, r);
    if (!l.ok()) return 2;
    for (int i = 0; i < 3; ++i) {
      if (!l->TryAcquire().value_or(false)) return 3;
      if (i < 2 && !l->Release().ok()) return 4;
    }
    if (!IsMapped(path)) return 11;
    holding.Notify();
    if (truncated.Wait(20) != 'x') return 5;
    absl::Status released = l->Release();  // through the page: SIGBUS
    if (!released.ok()) {
      fprintf(stderr, "release: %s\n", released.ToString().c_str());
      return 6;
    }
    // Truncated again while idle: the next acquisition reads past the end.
    if (truncate(path.c_str(), 0) != 0) return 7;
    if (!l->TryAcquire().value_or(false)) return 8;
    if (l->fence() != 4) return 9;  // not 1: the fence never goes back
    return l->Release().ok() ? 0 : 10;
  });
  assert_int_equal(holding.Wait(), 'x');
  assert_true(Shell(absl::StrCat(": > '", path, "'")));
  size_t size = 0;
  RecordOf(path, &size);
  assert_int_equal(size, 0);
  truncated.Notify();
  assert_int_equal(WaitChild(holder), 0);
  FlockRecordFields f = RecordOf(path, &size);
  assert_int_equal(size, 64);
  assert_int_equal(f.fence, 4);
  assert_false(f.held);
}

// The program's own SIGBUS handler, installed first, still gets every
// SIGBUS that is not a truncated record page; with none, SIGBUS still kills.
// Each case runs in a fresh program (this one, exec'd with --sigbus-case):
// a forked child would inherit the test runner's own signal handlers.
namespace sigbus_case {

std::atomic<int> g_unused{0};

volatile char* MapTruncated(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return nullptr;
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED || ftruncate(fd, 0) != 0) return nullptr;
  return static_cast<volatile char*>(p);
}

bool UseMappedRecord(const std::string& dir) {
  auto store = FlockStoreIn(dir);
  absl::StatusOr<Lock> l = Lock::Create(store, "own-handler");
  for (int i = 0; i < 3; ++i) {  // mapped from the second acquisition on
    if (!l.ok() || !l->TryAcquire().value_or(false) || !l->Release().ok()) return false;
  }
  return IsMapped(FlockFileOf(dir, "own-handler"));
}

// Exit codes: 42 the program's handler ran; 5 the fault did not happen;
// 3 and 4 setup failures; death by a signal as the kernel decides.
int Run(const std::string& which, const std::string& dir) {
  struct sigaction at_start;
  if (sigaction(SIGBUS, nullptr, &at_start) != 0) return 3;
  if (which == "probe") {  // 0: SIGBUS has its default action at start
    return (at_start.sa_flags & SA_SIGINFO) == 0 && at_start.sa_handler == SIG_DFL ? 0 : 1;
  }
  if (which == "handled") {
    struct sigaction sa = {};
    sa.sa_flags = SA_SIGINFO;
    sa.sa_sigaction = [](int, siginfo_t*, void*) { _exit(42 + g_unused.load()); };
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, nullptr) != 0) return 3;
  }
  if (!UseMappedRecord(dir)) return 4;
  if (which == "sent") {
    kill(getpid(), SIGBUS);
    return 5;
  }
  volatile char* p = MapTruncated(dir + "/program-" + which);
  if (p == nullptr) return 4;
  return p[0] == 0 ? 5 : 6;
}

}  // namespace sigbus_case

int RunFresh(const std::string& which, const std::string& dir) {
  return WaitChild(ForkChild([&] {
    execl("/proc/self/exe", "flock_record_test", "--sigbus-case", which.c_str(), dir.c_str(),
          static_cast<char*>(nullptr));
    return 99;
  }));
}

void OtherSigbusGoesToTheProgram(void**) {
  const std::string dir = MakeTempDir();
  assert_int_equal(RunFresh("handled", dir), 42);
  // Under a sanitizer, its handler was there first: it reports the fault
  // (and exits) where the default action would have killed.
  const bool sanitizer = RunFresh("probe", dir) != 0;
  for (const char* which : {"unhandled", "sent"}) {
    const int code = RunFresh(which, dir);
    if (sanitizer ? code == 0 || (code >= 3 && code <= 6) : code != 128 + SIGBUS) {
      fail_msg("%s: exit %d", which, code);
    }
  }
}

// Another process rewrites the first 64 bytes all the time (garbage, and
// valid records with a held mark and higher fences) while we lock and
// unlock: nothing crashes, and our fences only grow.
void RacingWriterNeverTakesFencesBack(void**) {
  const std::string dir = MakeTempDir();
  auto store = FlockStoreIn(dir);
  const std::string r = UniqueResource("racing");
  const std::string path = FlockFileOf(dir, r);
  Lock lock = LockOrFail(store, r);
  for (int i = 0; i < 2; ++i) {
    TakeAndRelease(lock);
  }
  assert_true(IsMapped(path));
  std::atomic<int>* stop = SharedMemory<std::atomic<int>>();
  pid_t writer = ForkChild([&] {
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return 2;
    char valid[64];
    uint64_t n = 0;
    while (stop->load() == 0) {
      ++n;
      if (n % 3 == 0) {
        ipclock::FormatFlockRecord(FlockRecordFields{n * 7, true, 1}, valid);
        if (pwrite(fd, valid, 64, 0) != 64) return 3;
      } else {
        char junk[64];
        for (char& c : junk) c = static_cast<char>(n * 131 + (&c - junk));
        if (pwrite(fd, junk, static_cast<size_t>(n % 64) + 1, 0) < 0) return 4;
      }
    }
    return 0;
  });
  uint64_t previous = 0;
  for (int i = 0; i < 20000; ++i) {
    absl::StatusOr<bool> got = lock.TryAcquire();
    if (!got.ok()) fail_msg("%s", got.status().ToString().c_str());
    assert_true(*got);
    if (*lock.fence() <= previous) {
      stop->store(1);
      fail_msg("fence went from %llu to %llu", static_cast<unsigned long long>(previous),
               static_cast<unsigned long long>(*lock.fence()));
    }
    previous = *lock.fence();
    ASSERT_OK(lock.Release());
  }
  stop->store(1);
  assert_int_equal(WaitChild(writer), 0);
}

// --- Failures under the store ----------------------------------------------------

// Each injected failure: a status naming the store, the resource and the
// call; nothing held afterwards (another process gets the lock); and the
// fence never back.
struct Faulted {
  std::string dir = MakeTempDir();
  std::string r = UniqueResource("fault");
  std::shared_ptr<Store> store = FlockStoreIn(dir, NoMapping());

  // Takes and releases once, for a record with fence 1; then a fresh Lock
  // on the resource, for the test.
  Lock Seeded() {
    {
      Lock l = LockOrFail(store, r);
      TakeAndRelease(l);
    }
    return LockOrFail(store, r);
  }
  void ExpectFailure(const absl::Status& s, absl::StatusCode code, const char* call) {
    ipclock::ClearFaults();
    if (s.code() != code || !Has(s, dir) || !Has(s, absl::StrCat("\"", r, "\"")) ||
        !Has(s, call) || !Has(s, "flock://")) {
      fail_msg("expected %s naming the store, \"%s\" and \"%s\": %s",
               absl::StatusCodeToString(code).c_str(), r.c_str(), call,
               s.ToString().c_str());
    }
  }
  void ExpectFreeAndFence(uint64_t fence) {
    assert_int_equal(WaitChild(ForkChild([&] {
                       auto own = FlockStoreIn(dir);
                       absl::StatusOr<Lock> l = Lock::Create(own, r);
                       if (!l.ok() || !l->TryAcquire().value_or(false)) return 2;
                       return l->fence() == fence ? 0 : 3;
                     })),
                     0);
  }
};

void ReadFailureNeverResetsTheFence(void**) {
  Faulted t;
  Lock lock = t.Seeded();
  ipclock::InjectFault(FaultPoint::kRead, EIO);
  absl::StatusOr<bool> got = lock.TryAcquire();
  t.ExpectFailure(got.status(), absl::StatusCode::kInternal, "read holder record");
  assert_false(lock.is_acquired());
  t.ExpectFreeAndFence(2);  // not 1: the failed read did not start over
}

void FullDiskOnRecordWrite(void**) {
  Faulted t;
  Lock lock = t.Seeded();
  ipclock::InjectFault(FaultPoint::kWrite, ENOSPC);
  absl::StatusOr<bool> got = lock.TryAcquire();
  t.ExpectFailure(got.status(), absl::StatusCode::kResourceExhausted,
                  "write holder record");
  assert_true(Has(got.status(), "ENOSPC"));
  assert_false(lock.is_acquired());
  t.ExpectFreeAndFence(2);
}

// A short write is continued: the whole record lands.
void ShortRecordWriteIsCompleted(void**) {
  Faulted t;
  Lock lock = t.Seeded();
  ipclock::InjectFault(FaultPoint::kWrite, 0, /*count=*/2, /*skip=*/0, /*short_bytes=*/10);
  assert_true(TryOrFail(lock));
  ipclock::ClearFaults();
  assert_int_equal(*lock.fence(), 2);
  FlockRecordFields f = RecordOf(FlockFileOf(t.dir, t.r));
  assert_int_equal(f.fence, 2);
  assert_true(f.held);
  ASSERT_OK(lock.Release());
  t.ExpectFreeAndFence(3);
}

// flock interrupted by a signal is tried again; a flock that fails (the
// kernel out of lock memory) is an error, and nothing is held.
void FlockInterruptedOrRefused(void**) {
  Faulted t;
  Lock lock = t.Seeded();
  ipclock::InjectFault(FaultPoint::kFlock, EINTR, /*count=*/3);
  assert_true(TryOrFail(lock));
  ipclock::ClearFaults();
  ASSERT_OK(lock.Release());
  ipclock::InjectFault(FaultPoint::kFlock, EINTR, /*count=*/3);
  ASSERT_OK(lock.Acquire(absl::Seconds(5)));
  ipclock::ClearFaults();
  ASSERT_OK(lock.Release());

  ipclock::InjectFault(FaultPoint::kFlock, ENOLCK);
  absl::StatusOr<bool> got = lock.TryAcquire();
  t.ExpectFailure(got.status(), absl::StatusCode::kResourceExhausted, "flock ");
  assert_false(lock.is_acquired());
  t.ExpectFreeAndFence(4);
}

void NoDescriptorForTheFile(void**) {
  Faulted t;
  // A resource whose file is not open yet (the store's idle files spare
  // the open of one used before).
  t.r = UniqueResource("emfile");
  Lock fresh = LockOrFail(t.store, t.r);
  ipclock::InjectFault(FaultPoint::kOpen, EMFILE);
  absl::StatusOr<bool> got = fresh.TryAcquire();
  t.ExpectFailure(got.status(), absl::StatusCode::kResourceExhausted, "open ");
  assert_true(Has(got.status(), "EMFILE"));
  assert_false(fresh.is_acquired());
  assert_true(TryOrFail(fresh));
  assert_int_equal(*fresh.fence(), 1);
}

// Mapping the record fails (no address space): records are read and written
// with pread/pwrite instead, and nothing else changes.
void MappingRefusedFallsBack(void**) {
  const std::string dir = MakeTempDir();
  auto store = FlockStoreIn(dir);
  Lock lock = LockOrFail(store, UniqueResource("nomap"));
  ipclock::InjectFault(FaultPoint::kMmap, ENOMEM);
  for (uint64_t i = 1; i <= 4; ++i) {
    assert_true(TryOrFail(lock));
    assert_int_equal(*lock.fence(), i);
    ASSERT_OK(lock.Release());
  }
  ipclock::ClearFaults();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--sigbus-case") {
    return sigbus_case::Run(argv[2], argv[3]);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(FormatAndParse),
      cmocka_unit_test(NameBlock),
      cmocka_unit_test(FencesGrowAcrossMappedAndPlainHolders),
      cmocka_unit_test(KilledMappedHolderIsReported),
      cmocka_unit_test(TruncatedMappedFileDoesNotCrash),
      cmocka_unit_test(OtherSigbusGoesToTheProgram),
      cmocka_unit_test(RacingWriterNeverTakesFencesBack),
      cmocka_unit_test(ReadFailureNeverResetsTheFence),
      cmocka_unit_test(FullDiskOnRecordWrite),
      cmocka_unit_test(ShortRecordWriteIsCompleted),
      cmocka_unit_test(FlockInterruptedOrRefused),
      cmocka_unit_test(NoDescriptorForTheFile),
      cmocka_unit_test(MappingRefusedFallsBack),
  };
  return cmocka_run_group_tests_name("flock_record", tests, nullptr, nullptr);
}
