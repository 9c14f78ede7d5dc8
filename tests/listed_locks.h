// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What `ipclock list --key` reads of one resource, for the suites of the
// stores that can be listed. Include last: it pulls in cmocka.h.

#ifndef IPCLOCK_TESTS_LISTED_LOCKS_H_
#define IPCLOCK_TESTS_LISTED_LOCKS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/admin/inspect.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

// The locks listed for `resource` in the store `dsn` (the test fails if
// they cannot be read).
inline std::vector<ipclock::HeldLock> ListedLocks(absl::string_view dsn,
                                                  const std::string& resource) {
  ipclock::ListRequest request;
  request.resource = resource;
  absl::StatusOr<ipclock::HeldLocks> held = ipclock::ListHeldLocks(dsn, request);
  ASSERT_OK(held);
  return std::move(held->locks);
}

// The one lock listed for `resource` in the store `dsn`: the test fails
// unless exactly one is listed, under that name.
inline ipclock::HeldLock OneListedLock(absl::string_view dsn, const std::string& resource) {
  std::vector<ipclock::HeldLock> locks = ListedLocks(dsn, resource);
  assert_int_equal(locks.size(), 1);
  assert_string_equal(locks[0].resource.c_str(), resource.c_str());
  return std::move(locks[0]);
}

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_LISTED_LOCKS_H_
