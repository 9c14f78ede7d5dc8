// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Test bodies shared by the stores whose locks live in a server session
// (PostgreSQL and MariaDB advisory locks), written once and run by each
// store's suite with what differs between the servers: how an
// administrator ends the session that holds a lock, and what the store says
// then.

#ifndef IPCLOCK_TESTS_SESSION_STORE_CASES_H_
#define IPCLOCK_TESTS_SESSION_STORE_CASES_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"

namespace ipclock_test {

struct SessionStore {
  std::string dsn;  // the store's DSN
  std::string tag;  // put before the test's resource names
  // Ends the server session that holds `resource` (the test's own admin
  // connection, as an administrator would).
  std::function<void(const std::string& resource)> end_holder;
  // How long another process may wait for a lock freed that way: MariaDB
  // frees a killed session's locks a moment after its socket.
  absl::Duration freed_within = absl::ZeroDuration();
  // What CheckAcquired says of a lock whose session was ended ("" if not
  // checked).
  std::string lost_says;
  // What Release says of it ("" if not checked).
  std::string release_says;
  // Run on the checked lock after its loss was found (more that the store
  // says of it).
  std::function<void(const std::shared_ptr<ipclock::Store>& store, ipclock::Lock& lost)> after_loss;
  // The call on the parent's key that a forked child must be refused
  // (besides Delete): a probe of the session.
  std::function<absl::Status(ipclock::Store& store, ipclock::Key& key)> probe;
};

// Two held locks whose sessions an administrator ends: the store finds one
// lost when asked and the other when it is released, the server lets
// another process have both, and both keys work again on fresh sessions.
void KilledSessionLosesTheLock(const SessionStore& s);

// A forked child may neither release nor probe a key whose session is the
// parent's, and leaving (the key's state destroyed, with the child's copy of
// the connection) ends nothing of the parent's: the parent still holds it.
void ForkedChildCannotUseParentsKey(const SessionStore& s);

// The cases above as a suite's tests, given a SessionSuite as cmocka's
// state (cmocka_unit_test_prestate).
struct SessionSuite {
  const char* server_var;  // the server's DSN variable; without it the test skips
  SessionStore (*sessions)();
};
void KilledSessionLosesTheLock(void** state);
void ForkedChildCannotUseParentsKey(void** state);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_SESSION_STORE_CASES_H_
