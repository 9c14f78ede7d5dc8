// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The etcd store's tests with a member of the suite's own, frozen; TLS; and
// shared locks, listing and fork, run by etcd_store_test.cc's table.

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "ipclock/stores/etcd_store.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store_factory.h"
#include "own_server.h"
#include "scripted_server.h"
#include "peer_process.h"
#include "spawn_util.h"
#include "stores/etcd/etcd_json.h"
#include "stores/etcd/etcd_names.h"
#include "etcd_store_test.h"
#include "listed_locks.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

using ipclock::Lock;
using ipclock::LockMode;
using ipclock::Store;

// --- A member of our own, frozen --------------------------------------------------------

// A member on two ports of the test's own (client and peer).
class OwnEtcd : public ScriptedServer {
 public:
  OwnEtcd()
      : ScriptedServer({"etcd-server", "etcd", "etcd.pid",
                        "no etcd (apt-get install etcd-server etcd-client)", 90, 2, {"own"}, 1,
                        30}) {}
  std::string dsn(const std::string& query) const {
    return absl::StrCat("etcd://127.0.0.1:", port(), "/own?", query);
  }
};

// A lock taken through a store on `own` with DSN options `query`.
Lock HeldOn(OwnEtcd& own, const char* query, const char* tag) {
  Lock lock = HeldOrFail(OpenStoreOrFail(own.dsn(query)), UniqueResource(tag));
  return lock;
}

// A member that stops answering (SIGSTOP: no quorum, nothing sent back):
// checks say Unavailable while the lease may live, and Aborted once the
// TTL has passed since etcd last confirmed a renewal; never "held".
void UnreachableIsUnavailableThenLost(void**) {
  REQUIRE_SERVER();
  OwnEtcd own;
  START_OWN(own);
  Lock lock = HeldOn(own, "ttl=3&timeout=0.5", "frozen");
  ASSERT_OK(lock.Refresh());
  const double renewed = NowSeconds();
  own.Freeze();
  ASSERT_CODE(lock.CheckAcquired(), absl::StatusCode::kUnavailable);
  ASSERT_CODE(lock.Refresh(), absl::StatusCode::kUnavailable);
  absl::Status last;
  while (NowSeconds() - renewed < 8) {
    last = lock.CheckAcquired();
    if (!absl::IsUnavailable(last)) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  const double after = NowSeconds() - renewed;
  print_message("Unavailable until %.2f s after the last renewal (TTL 3 s), then: %s\n", after,
                last.ToString().c_str());
  ASSERT_CODE(last, absl::StatusCode::kAborted);
  assert_true(after >= 3);
  assert_true(absl::StrContains(last.message(), "TTL"));
  own.Thaw();
}

// A renewal sent to a member that no longer answers is not waited on for
// the DSN's whole request timeout: the lock may be another's once its lease
// could have expired, so the renewal ends there and says Aborted.
void RenewalGivesUpWhenTheLeaseMayEnd(void**) {
  REQUIRE_SERVER();
  OwnEtcd own;
  START_OWN(own);
  Lock lock = HeldOn(own, "ttl=2&timeout=60", "frozen-renewal");
  // Read before the renewal is sent: the store counts the lease from the
  // moment it sent its last confirmed renewal, which is no earlier (read
  // after it returned, a loaded machine saw 1.999 s).
  const double renewed = NowSeconds();
  ASSERT_OK(lock.Refresh());
  own.Freeze();
  absl::Status s = lock.Refresh();
  const double after = NowSeconds() - renewed;
  print_message("the renewal ended %.2f s after the last one (TTL 2 s, timeout 60 s): %s\n", after,
                s.ToString().c_str());
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(after >= 2);
  assert_true(after < 30);  // not the request timeout
  own.Thaw();
}

// --- TLS ------------------------------------------------------------------------------------

void TlsRefusalsAreConfigurationErrors(void**) {
  REQUIRE_VAR("IPCLOCK_TEST_ETCDS");
  const std::string certs = EnvOrNull("IPCLOCK_TEST_ETCD_CERTS");
  const std::string base =
      absl::StrCat("etcds://127.0.0.1:", DsnPort(EnvOrNull("IPCLOCK_TEST_ETCDS")), "/ipclock-tls");
  // Without a client certificate the member refuses the handshake.
  absl::StatusOr<std::shared_ptr<Store>> s =
      ipclock::StoreFromDsn(absl::StrCat(base, "?cacert=", certs, "/ca.pem"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  print_message("no client certificate: %s\n", s.status().ToString().c_str());
  // A CA that did not sign the member's certificate: we refuse it.
  s = ipclock::StoreFromDsn(absl::StrCat(base, "?cacert=", certs, "/client.pem&cert=", certs,
                                         "/client.pem&key=", certs, "/client-key.pem"));
  // A server certificate that fails is configuration (ipclock/errors.h).
  ASSERT_CODE(s, absl::StatusCode::kInvalidArgument);
  print_message("wrong CA: %s\n", s.status().ToString().c_str());
  // TLS to the plain member: a configuration error too, not a member down.
  s = ipclock::StoreFromDsn(absl::StrCat("etcds://", Endpoint(), "?cacert=", certs, "/ca.pem&cert=",
                                         certs, "/client.pem&key=", certs, "/client-key.pem"));
  ASSERT_CODE(s, absl::StatusCode::kInvalidArgument);
  print_message("TLS to a plain port: %s\n", s.status().ToString().c_str());
  // Unverified but with our certificate: accepted, and locks work.
  auto store = OpenStoreOrFail(absl::StrCat(base, "?insecure_skip_tls_verify=true&cert=", certs,
                                 "/client.pem&key=", certs, "/client-key.pem"));
  Lock lock = LockOrFail(store, UniqueResource("tls"));
  TakeAndRelease(lock);
  // The CLI ends at once with the permission status, without retrying.
  const double t0 = NowSeconds();
  int code = 0;
  RunForOutput({IpclockPath(), "run", "--store", absl::StrCat(base, "?cacert=", certs, "/ca.pem"),
                "--key", "x", "--", "true"},
               &code);
  assert_int_equal(code, 77);
  assert_true(NowSeconds() - t0 < 5);
}

// --- Shared locks, list, fork -----------------------------------------------------------

// Readers of ipclock coexist; `etcdctl lock` (an exclusive Mutex) waits
// for them, and readers queued behind it wait for it.
void SharedLocksBesideEtcdctl(void**) {
  REQUIRE_SERVER();
  auto store = OpenStoreOrFail(Dsn());
  const std::string r = UniqueResource("shared");
  const std::string dir = MakeTempDir();
  Lock r1 = LockOrFail(store, r), r2 = LockOrFail(store, r), late = LockOrFail(store, r);
  assert_true(TryOrFail(r1, LockMode::kShared));
  assert_true(TryOrFail(r2, LockMode::kShared));
  pid_t writer = CtlLock(EtcdctlName(r), HoldUntilGo(dir, "w"));
  AwaitQueueLength(r, 3);
  absl::SleepFor(absl::Milliseconds(200));
  assert_false(FileExists(dir + "/w"));
  // A reader behind the queued writer waits for it.
  assert_false(TryOrFail(late, LockMode::kShared));
  ASSERT_OK(r1.Release());
  ASSERT_OK(r2.Release());
  assert_true(WaitForFile(dir + "/w", 20));
  assert_false(TryOrFail(late, LockMode::kShared));
  assert_true(WriteFile(dir + "/go", ""));
  ASSERT_OK(late.Acquire(absl::Seconds(20), LockMode::kShared));
  assert_int_equal(Reap(writer, 20), 0);
  ASSERT_OK(late.Release());
}

// `ipclock list`: holder, waiters of both clients, the lease and its TTL.
void ListShowsHolderWaitersAndLease(void**) {
  REQUIRE_SERVER();
  const std::string dsn = Dsn();
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("list");
  Lock holder = HeldOrFail(store, r);
  pid_t w1 = CtlLock(EtcdctlName(r), "true");
  AwaitQueueLength(r, 2);
  pid_t w2 = Started(Spawn(Run(dsn, r, {"true"})));
  AwaitQueueLength(r, 3);
  const ipclock::HeldLock l = OneListedLock(dsn, r);
  assert_string_equal(l.mode.c_str(), "exclusive");
  assert_int_equal(l.pid, getpid());
  assert_int_equal(*l.waiters, 2);
  assert_int_equal(*l.fence, static_cast<int64_t>(*holder.fence()));
  bool lease = false, ttl = false;
  for (const auto& d : l.text_details) {
    lease = lease || (d.first == "lease" &&
                      d.second == ipclock::LeaseHex(ipclock::EtcdHeldKeyOf(holder)->lease));
  }
  for (const auto& d : l.number_details) ttl = ttl || (d.first == "lease_ttl_left" && d.second > 0);
  assert_true(lease && ttl);
  // One lock whoever holds it; since when it is held, and who waits since
  // when, from ipclock's key notes (etcdctl's keys carry none).
  assert_true(absl::EndsWith(l.lock, absl::StrCat("/", r)));
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  assert_true(l.since.has_value() && *l.since <= now && *l.since > now - 60);
  assert_int_equal(l.waiter_list.size(), 2);
  assert_int_equal(l.waiter_list[0].pid, 0);
  assert_false(l.waiter_list[0].since.has_value());
  assert_int_equal(l.waiter_list[1].pid, w2);
  assert_true(l.waiter_list[1].since.has_value() && *l.waiter_list[1].since <= now);
  int code = 0;
  std::string out = RunForOutput({IpclockPath(), "list", "--json", "--store", dsn, "--key", r}, &code);
  assert_int_equal(code, 0);
  assert_true(absl::StrContains(out, "\"waiters\":2"));
  out = RunForOutput(
      {IpclockPath(), "list", "--format=openmetrics", "--store", dsn, "--key", r}, &code);
  assert_int_equal(code, 0);
  assert_true(absl::StrContains(out, "ipclock_lock_longest_wait_seconds{store="));
  ASSERT_OK(holder.Release());
  assert_int_equal(Reap(w1, 20), 0);
  assert_int_equal(Reap(w2, 20), 0);
}

// A forked child has its own lease: it neither uses nor releases the
// parent's lock.
void ForkedChildHasItsOwnLease(void**) {
  REQUIRE_SERVER();
  // The inherited Lock is the parent's: releasing it here lets nothing go.
  ForkedChildIsAnotherHolder(OpenStoreOrFail(Dsn()), UniqueResource("fork"),
                             [](Lock& inherited) { return inherited.Release().ok() ? 0 : 4; });
}

}  // namespace ipclock_test
