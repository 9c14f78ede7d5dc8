// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the source files of the etcd suite share: the members, etcdctl as a
// peer, and `ipclock run`; and the tests that live in
// etcd_store_test_members.cc, for etcd_store_test.cc's table.

#ifndef IPCLOCK_TESTS_ETCD_STORE_TEST_H_
#define IPCLOCK_TESTS_ETCD_STORE_TEST_H_

#include <stddef.h>
#include <sys/types.h>

#include <string>
#include <vector>

// Skip the test without the etcd members of tools/test-servers (fail it
// under CI=true).
#define REQUIRE_VAR(var) RequireEnv(var, "tools/test-servers/etcd.sh starts the members")
#define REQUIRE_SERVER() REQUIRE_VAR("IPCLOCK_TEST_ETCD")

namespace ipclock_test {

// 127.0.0.1:PORT of the plain member.
std::string Endpoint();

// Locks under /etcd-test, with `query` (e.g. "ttl=2").
std::string Dsn(const std::string& query = "");
// What `etcdctl lock` calls resource `r` of Dsn().
std::string EtcdctlName(const std::string& r);

// etcdctl's path; fails the test without it.
std::string Etcdctl();

// etcdctl's one-shot commands on the plain member; its output, trimmed.
std::string Ctl(const std::vector<std::string>& args, int* code = nullptr);

// Peers the tests start are killed at the test's teardown if it fails
// before it waited for them (a failing test must leave no etcdctl waiting
// on a lock forever).
pid_t Started(pid_t pid);
int Reap(pid_t pid, double timeout_sec = 30);

// `etcdctl lock NAME -- sh -c SCRIPT`, started now.
pid_t CtlLock(const std::string& name, const std::string& script);

// A script that says it holds (DIR/MARK) and holds until DIR/go appears,
// or until DIR is gone: a test that failed before writing DIR/go leaves no
// holder behind once its dirs are removed.
std::string HoldUntilGo(const std::string& dir, const std::string& mark = "held");

// The keys under `prefix` as `etcdctl get --prefix --keys-only` prints them.
std::vector<std::string> KeysUnder(const std::string& prefix);

// Polls until the queue of `r` (keys under its P/) holds `n` keys.
void AwaitQueueLength(const std::string& r, size_t n);

// Kills the command whose pid `ipclock run` had it write to `pid_file`,
// once written.
void KillCommandOf(const std::string& pid_file);

// `ipclock run` for the suite's DSN.
std::vector<std::string> Run(const std::string& dsn, const std::string& r,
                             const std::vector<std::string>& command);

// `ipclock run` on `r`, in a process group of its own, whose command
// writes its pid to `pid_file` and sleeps; returns once that file is
// written (the lock held).
pid_t StartSleepingHolder(const std::string& dsn, const std::string& r,
                          const std::string& pid_file);
// Kills such a holder as a whole service would be: `run`'s process group
// with SIGKILL (ipclock first: its command ending first would make it
// release), then the command.
void KillSleepingHolder(pid_t run, const std::string& pid_file);

// The tests of etcd_store_test_members.cc, in one declaration, for the suite's table.
void UnreachableIsUnavailableThenLost(void**), RenewalGivesUpWhenTheLeaseMayEnd(void**),
    TlsRefusalsAreConfigurationErrors(void**), SharedLocksBesideEtcdctl(void**),
    ListShowsHolderWaitersAndLease(void**), ForkedChildHasItsOwnLease(void**);
// And of etcd_store_test_handoffs.cc.
void FencesGrowAcrossClients(void**), DeathToldOnlyToTheNextHolder(void**),
    RunLeavesNoLease(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_ETCD_STORE_TEST_H_
