// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Redis semaphores against PHP's symfony/semaphore 5.4 (RedisStore over
// php-redis, tests/php/redis_semaphore_peer.php) on the server that
// tools/test-servers/redis.sh starts: one limit both ways, Symfony's
// expiry and refresh seen from ipclock, and ipclock's expiry seen from PHP.
// Skipped without php-cli, php-redis and php-symfony-semaphore (failed
// instead under IPCLOCK_REQUIRE_PHP=1), and without the server.

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "ipclock/stores/slot_semaphore_store.h"
#include "php_peer.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::Store;
using ipclock_test::NowSeconds;
using ipclock_test::PhpPeerHolder;
using ipclock_test::UniqueResource;

std::string g_server;  // redis://host:port, for PHP

std::shared_ptr<Store> Semaphores() {
  // Plain names: PHP names the keys by the resource itself.
  std::shared_ptr<Store> redis =
      ipclock_test::OpenStoreOrFail(absl::StrCat(g_server, "?secret=none"));
  return ipclock::SemaphoreStoreFor(redis);
}

Lock MakeSemaphore(const std::string& resource, uint32_t limit, uint32_t weight,
                   absl::Duration ttl = absl::Seconds(300)) {
  ipclock::LockOptions options;
  options.permits = limit;
  options.weight = weight;
  options.ttl = ttl;
  absl::StatusOr<Lock> lock = Lock::Create(Semaphores(), resource, options);
  if (!lock.ok()) fail_msg("%s", lock.status().ToString().c_str());
  return *std::move(lock);
}

bool TryOnce(Lock& lock) {
  absl::StatusOr<bool> got = lock.TryAcquire();
  ASSERT_OK(got);
  return *got;
}

std::vector<std::string> Peer(const std::string& resource, int limit, int weight, int ttl,
                              const char* mode) {
  return {"php", ipclock_test::PhpPeerScript("redis_semaphore_peer.php"), g_server, resource,
          absl::StrCat(limit), absl::StrCat(weight), absl::StrCat(ttl), mode};
}

std::string PhpTry(const std::string& resource, int limit, int weight) {
  return ipclock_test::RunPhpPeer(Peer(resource, limit, weight, 300, "try"));
}

void RequirePeer() {
  ipclock_test::PhpPeerNeeds needs{ipclock_test::PhpPeerScript("redis_semaphore_peer.php"), true,
                                   "redis", "php-cli php-redis php-symfony-semaphore"};
  REQUIRE_PHP_PEER(needs, ipclock_test::PhpRequired());
  if (access("/usr/share/php/Symfony/Component/Semaphore/autoload.php", R_OK) != 0 &&
      getenv("IPCLOCK_SYMFONY_SEMAPHORE_AUTOLOAD") == nullptr) {
    ipclock_test::SkipIf("Symfony Semaphore is not installed (apt-get install "
                         "php-symfony-semaphore)",
                         ipclock_test::PhpRequired());
  }
}

// PHP holds 2 of 3: ipclock gets 1, and not 2.
void PhpHoldsTwoOfThree(void**) {
  RequirePeer();
  const std::string r = UniqueResource("php-sem-2of3");
  PhpPeerHolder php(Peer(r, 3, 2, 300, "hold"));
  Lock two = MakeSemaphore(r, 3, 2);
  assert_false(TryOnce(two));
  Lock one = MakeSemaphore(r, 3, 1);
  assert_true(TryOnce(one));
  Lock another = MakeSemaphore(r, 3, 1);
  assert_false(TryOnce(another));
  ASSERT_OK(one.Release());
  php.Release();
  assert_true(TryOnce(two));
  ASSERT_OK(two.Release());
}

// ipclock holds 3 of 3: PHP's acquire returns false, then true once they go.
void IpclockHoldsThree(void**) {
  RequirePeer();
  const std::string r = UniqueResource("php-sem-3of3");
  Lock all = MakeSemaphore(r, 3, 3);
  assert_true(TryOnce(all));
  assert_string_equal(PhpTry(r, 3, 1).c_str(), "busy");
  ASSERT_OK(all.Release());
  assert_string_equal(PhpTry(r, 3, 1).c_str(), "acquired");
}

// A PHP holder that goes without releasing keeps its permits until its TTL
// ends, and one that refreshes keeps them past it.
void PhpExpiryAndRefresh(void**) {
  RequirePeer();
  const std::string r = UniqueResource("php-sem-ttl");
  {
    PhpPeerHolder refreshing(Peer(r, 2, 2, 2, "refresh"));
    sleep(4);  // two TTLs: the refreshes kept it
    Lock lock = MakeSemaphore(r, 2, 1);
    assert_false(TryOnce(lock));
    refreshing.Release();
    assert_true(TryOnce(lock));
    ASSERT_OK(lock.Release());
  }
  PhpPeerHolder abandoned(Peer(r, 2, 2, 2, "abandon"));
  abandoned.Finish({});
  Lock lock = MakeSemaphore(r, 2, 1);
  assert_false(TryOnce(lock));
  const double start = NowSeconds();
  ASSERT_OK(lock.Acquire(absl::Seconds(10)));
  print_message("PHP's abandoned permits (TTL 2 s) came back after %.1f s\n",
                NowSeconds() - start);
  ASSERT_OK(lock.Release());
}

// ipclock's lease, in whole seconds, is Symfony's to expire: PHP sees
// ipclock's abandoned permits until it ends, and a refresh keeps them.
void IpclockExpiryAndRefreshSeenByPhp(void**) {
  RequirePeer();
  const std::string r = UniqueResource("php-sem-ours");
  Lock kept = MakeSemaphore(r, 1, 1, absl::Seconds(2));
  assert_true(TryOnce(kept));
  sleep(1);
  ASSERT_OK(kept.Refresh());
  sleep(2);  // past the first lease: the refresh kept it
  assert_string_equal(PhpTry(r, 1, 1).c_str(), "busy");
  kept.Abandon();  // as a holder that died: nothing released
  const double start = NowSeconds();
  while (PhpTry(r, 1, 1) == "busy") {
    if (NowSeconds() - start > 10) fail_msg("ipclock's abandoned permit never expired for PHP");
    usleep(200 * 1000);
  }
  print_message("ipclock's abandoned permit (TTL 2 s) free for PHP after %.1f s\n",
                NowSeconds() - start);
}

}  // namespace

int main() {
  const std::string dsn = ipclock_test::ExpandDsn("{env:IPCLOCK_TEST_REDIS}");
  // The DSN's /db path, if any, is for ipclock; PHP's peer reads host:port.
  g_server = dsn.substr(0, dsn.find('/', sizeof("redis://") - 1));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(PhpHoldsTwoOfThree),
      cmocka_unit_test(IpclockHoldsThree),
      cmocka_unit_test(PhpExpiryAndRefresh),
      cmocka_unit_test(IpclockExpiryAndRefreshSeenByPhp),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
