// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// For suites that start servers of their own (to stop, freeze, starve or
// restart them) beside the ones tools/test-servers/*.sh runs: the ports
// tools/test-servers/ports.sh leaves to tests, and a raw TCP exchange for
// speaking a server's text protocol (memcached's commands, ZooKeeper's
// four-letter words) without its client library. Nothing here calls
// CMocka, so forked children may use it too.

#ifndef IPCLOCK_TESTS_OWN_SERVER_H_
#define IPCLOCK_TESTS_OWN_SERVER_H_

#include <sys/types.h>

#include <functional>
#include <string>

namespace ipclock_test {

// Whether something accepts connections on 127.0.0.1:`port`.
bool Listening(int port);

// $IPCLOCK_TEST_PORT_BASE, or ports.sh's default (21300).
int TestPortBase();

// The first port of $IPCLOCK_TEST_PORT_BASE+90..98 (tests' own servers)
// at or after +`from` where nothing listens; 0 if none.
int FreeOwnPort(int from = 90);

// Stops `pid` with SIGSTOP, and waits (up to 5 s) until every thread of it
// has stopped: the signal lands a moment after kill() returns, and a
// request the server got in that moment would still be answered.
void FreezeProcess(pid_t pid);

// Sends `request` to 127.0.0.1:`port` and reads until `done(reply so far)`
// says the reply is complete, the peer closes, or `timeout_sec` passes.
// Empty when it cannot connect.
std::string RawExchange(int port, const std::string& request,
                        const std::function<bool(const std::string&)>& done,
                        double timeout_sec = 5);

// Servers a test started, killed by StopOwnServers() even when the test
// failed half-way (CMocka's failures skip destructors): use it as the
// tests' teardown.
void RegisterOwnServer(pid_t pid);
void ForgetOwnServer(pid_t pid);
int StopOwnServers(void** state = nullptr);
// Kills the server `*pid` (SIGKILL), waits for it, forgets it if it was
// registered and sets `*pid` to -1. Nothing when `*pid` is not above 0.
void KillOwnServer(pid_t* pid);

// The port of a DSN "scheme://host:PORT[...]"; 0 if it has none.
int DsnPort(const std::string& dsn);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_OWN_SERVER_H_
