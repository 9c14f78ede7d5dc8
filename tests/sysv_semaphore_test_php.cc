// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The SysV semaphore store beside Symfony's SemaphoreStore in PHP
// (tests/php/semaphore_peer.php) as a separate process: exclusion both ways
// and a PHP holder's death reported, run by sysv_semaphore_test.cc's table.

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/stores/semaphore_store.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "ipclock_config.h"
#include "peer_process.h"
#include "platform/faults.h"
#include "spawn_util.h"
#include "semaphore_test_util.h"
#include "sysv_semaphore_test.h"
#include "php_peer.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

// --- PHP interop ---------------------------------------------------------------

// Symfony's SemaphoreStore in PHP (tests/php/semaphore_peer.php); skipped
// when it cannot run here.
#define SKIP_WITHOUT_PHP()                                                                  \
  REQUIRE_PHP_PEER((PhpPeerNeeds{PhpPeerScript("semaphore_peer.php"), true, "sysvsem",      \
                                 "php-cli php-symfony-lock"}),                              \
                   false)

std::vector<std::string> PhpPeer(const std::string& resource, const char* mode) {
  return {"php", PhpPeerScript("semaphore_peer.php"), resource, mode};
}

void PhpHoldsIpclockWaits(void**) {
  SKIP_WITHOUT_PHP();
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("php-holds");
  Lock lock = MakeLock(store, resource);
  // The waiter is forked before PHP starts: a child forked later would
  // inherit the pipe to PHP's stdin and keep PHP from seeing its end.
  Signal go, waiting;
  pid_t waiter = ForkChild([&] {
    Lock w = MakeLock(store, resource);
    if (go.Wait(30) != 'x') return 4;
    waiting.Notify();
    absl::Status s = w.Acquire(absl::Seconds(20));
    if (s.ok() && w.previous_owner_died()) return 5;  // PHP released cleanly
    if (s.ok()) s = w.Release();
    if (!s.ok()) fprintf(stderr, "waiter: %s\n", s.ToString().c_str());
    return s.ok() ? 0 : 2;
  });
  {
    PeerProcess php(PhpPeer(resource, "hold"));
    assert_string_equal(php.ReadLine().c_str(), "locked");
    assert_false(TryOrFail(lock));
    // The waiter must survive Symfony's release, which removes the set.
    go.Notify();
    assert_int_equal(waiting.Wait(), 'x');
    usleep(200 * 1000);
    php.CloseStdin();
    assert_int_equal(php.Wait(), 0);
    assert_int_equal(WaitChild(waiter), 0);
  }
  assert_true(TryOrFail(lock));
  assert_false(lock.previous_owner_died());
  ASSERT_OK(lock.Release());
  Drop(lock);
  store.reset();
  assert_false(SetExists(resource));
}

void IpclockHoldsPhpIsRefused(void**) {
  SKIP_WITHOUT_PHP();
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("ipclock-holds");
  Lock lock = HeldOrFail(store, resource);
  {
    PeerProcess php(PhpPeer(resource, "try"));
    assert_string_equal(php.ReadLine().c_str(), "busy");
    assert_int_equal(php.Wait(), 0);
  }
  {
    // PHP waits in sem_acquire; our release wakes it.
    PeerProcess php(PhpPeer(resource, "wait"));
    usleep(300 * 1000);
    ASSERT_OK(lock.Release());
    assert_string_equal(php.ReadLine().c_str(), "acquired");
    assert_int_equal(php.Wait(), 0);
  }
  {
    // Our Lock is still attached (idle): PHP takes the set as it is.
    PeerProcess php(PhpPeer(resource, "try"));
    assert_string_equal(php.ReadLine().c_str(), "acquired");
    assert_int_equal(php.Wait(), 0);
  }
  // Symfony removed the set on its release, attached Lock or not.
  assert_false(SetExists(resource));
  TakeAndRelease(lock);
}

// Which process made the set: PHP (three semaphores, SETVAL by PHP), or
// ipclock (five), attached to it beforehand and idle in this process.
enum class Maker { kPhp, kIpclock };

// Starts a PHP holder of `resource`, the set made by `maker`.
std::unique_ptr<PeerProcess> StartPhpHolder(const std::string& resource, Maker maker,
                                            const std::shared_ptr<Store>& maker_store) {
  if (maker == Maker::kIpclock) {
    Lock keeper = HeldOrFail(maker_store, resource);
  }  // released and kept idle by `maker_store`
  auto php = std::make_unique<PeerProcess>(PhpPeer(resource, "hold"));
  if (php->ReadLine() != "locked") fail_msg("PHP did not take the lock");
  struct semid_ds ds;
  assert_int_equal(semctl(SemidOf(resource), 0, IPC_STAT, &ds), 0);
  assert_int_equal(static_cast<int>(ds.sem_nsems), maker == Maker::kPhp ? 3 : 5);
  return php;
}

// A PHP holder killed with SIGKILL, and an ipclock process that comes
// after: it must be told (the pid the kernel names as the lock's last user
// is PHP's, read before our own SETVAL could replace it).
void PhpHolderKilledReportedToLaterProcess(void**) {
  SKIP_WITHOUT_PHP();
  for (Maker maker : {Maker::kPhp, Maker::kIpclock}) {
    std::shared_ptr<Store> maker_store = OpenStore();
    const std::string resource = UniqueResource("php-killed-later");
    std::unique_ptr<PeerProcess> php = StartPhpHolder(resource, maker, maker_store);
    kill(php->pid(), SIGKILL);
    assert_int_equal(php->Wait(), 128 + SIGKILL);
    pid_t later = ForkChild([&] {
      absl::StatusOr<std::shared_ptr<Store>> own = ipclock::StoreFromDsn("semaphore");
      if (!own.ok()) return 2;
      Lock lock = MakeLock(*own, resource);
      if (!lock.TryAcquire().value_or(false)) return 3;
      if (!lock.previous_owner_died()) return 4;
      if (!lock.Release().ok()) return 5;
      // Released cleanly: the next one is not told.
      Lock next = MakeLock(*own, resource);
      if (!next.TryAcquire().value_or(false)) return 6;
      return next.previous_owner_died() ? 7 : 0;
    });
    if (int code = WaitChild(later); code != 0) {
      fail_msg("set made by %s: check %d failed", maker == Maker::kPhp ? "PHP" : "ipclock",
               code);
    }
  }
}

// A PHP holder killed with SIGKILL while an ipclock process waits: the
// kernel gives the permit back while PHP is still exiting (not yet a
// zombie), and the waiter must be told all the same. Several rounds: the
// waiter usually runs before PHP has finished dying.
void PhpHolderKilledReportedToWaiter(void**) {
  SKIP_WITHOUT_PHP();
  for (Maker maker : {Maker::kPhp, Maker::kIpclock}) {
    for (int round = 0; round < 5; ++round) {
      std::shared_ptr<Store> maker_store = OpenStore();
      const std::string resource = UniqueResource("php-killed-waiter");
      auto* report = SharedMemory<DeathReport>();
      Signal go, waiting;
      pid_t waiter = ForkChild([&] {
        absl::StatusOr<std::shared_ptr<Store>> own = ipclock::StoreFromDsn("semaphore");
        if (!own.ok() || go.Wait(30) != 'x') return 2;
        Lock lock = MakeLock(*own, resource);
        waiting.Notify();
        absl::Status s = lock.Acquire(absl::Seconds(20));
        report->acquired = s.ok() ? 1 : 0;
        report->died = lock.previous_owner_died() ? 1 : 0;
        return s.ok() && lock.Release().ok() ? 0 : 3;
      });
      std::unique_ptr<PeerProcess> php = StartPhpHolder(resource, maker, maker_store);
      go.Notify();
      assert_int_equal(waiting.Wait(), 'x');
      usleep(150 * 1000);  // asleep in semop by now
      kill(php->pid(), SIGKILL);
      assert_int_equal(WaitChild(waiter), 0);
      assert_int_equal(php->Wait(), 128 + SIGKILL);
      assert_int_equal(report->acquired.load(), 1);
      if (report->died.load() != 1) {
        fail_msg("round %d, set made by %s: the waiter was not told of PHP's death", round,
                 maker == Maker::kPhp ? "PHP" : "ipclock");
      }
    }
  }
}

}  // namespace ipclock_test
