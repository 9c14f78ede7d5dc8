// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the source files of the ZooKeeper suite share, and the tests that
// live in zookeeper_store_test_losses.cc, for zookeeper_store_test.cc's table.

#ifndef IPCLOCK_TESTS_ZOOKEEPER_STORE_TEST_H_
#define IPCLOCK_TESTS_ZOOKEEPER_STORE_TEST_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "scripted_server.h"

// Skips the test without $IPCLOCK_TEST_ZOOKEEPER (fails it under CI=true).
#define REQUIRE_SERVER() \
  RequireEnv("IPCLOCK_TEST_ZOOKEEPER", "tools/test-servers/zookeeper.sh starts one")

namespace ipclock_test {

// 127.0.0.1:PORT of $IPCLOCK_TEST_ZOOKEEPER.
std::string Server();
// The recipe under /ipclock-test, sessions of 2 s.
std::string RecipeDsn(const std::string& extra = "");
// Symfony's layout at the root, as Symfony's StoreFactory connects.
std::string SymfonyDsn();
// zk_peer's one-shot commands; its output, trimmed.
std::string Peer(const std::string& server, const std::string& cmd, const std::string& path);
// The path of the node that `lock` holds, from `ipclock list`'s reading.
std::string NodeOf(const std::string& dsn, const std::string& resource);

// A ZooKeeper server of the suite's own, to freeze with SIGSTOP and stop.
class OwnZooKeeper : public ScriptedServer {
 public:
  OwnZooKeeper()
      : ScriptedServer({"zookeeper-server", "ZooKeeper", "zk.pid",
                        "no java or ZooKeeper jars (apt-get install zookeeperd)", 93, 1, {}, 2,
                        60}) {}
  std::string server() const { return absl::StrCat("127.0.0.1:", port()); }
  std::string dsn(const std::string& query) const {
    return absl::StrCat("zookeeper://", server(), "/ipclock-own?secret=none&", query);
  }
};

// The tests of zookeeper_store_test_losses.cc, in one declaration, for the suite's table.
void DeletedNodeIsLossSeenByTheWatch(void**), DisconnectShorterThanSessionIsNotLoss(void**),
    SessionExpiryIsLoss(void**), LostOnceTheSessionCanHaveExpired(void**),
    UnreachableEnsembleIsUnavailable(void**), KilledHolderIsListedThenReported(void**),
    MultiOnAnExpiredSessionIsRefused(void**),
    MultiWhoseFirstPathIsRefusedFreesNothingOfOurs(void**), ForkedChildHasItsOwnSession(void**),
    CliRunListAndLoss(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_ZOOKEEPER_STORE_TEST_H_
