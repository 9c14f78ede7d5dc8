// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers of the flock store's suites. Include before test_util.h (which
// must come last).

#ifndef IPCLOCK_TESTS_FLOCK_TEST_UTIL_H_
#define IPCLOCK_TESTS_FLOCK_TEST_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/store.h"

namespace ipclock_test {

// A flock store on `dir` (no RemoveIPC warnings: the suites use /tmp),
// ending the process if it cannot be made: call it where a failure is the
// test's failure, and check the result of NewFlockStore where it is not.
inline std::shared_ptr<ipclock::Store> FlockStoreIn(
    const std::string& dir,
    ipclock::FlockStoreOptions options = ipclock::FlockStoreOptions()) {
  options.dir = dir;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  absl::StatusOr<std::shared_ptr<ipclock::Store>> s = ipclock::NewFlockStore(options);
  if (!s.ok()) {
    fprintf(stderr, "NewFlockStore(%s): %s\n", dir.c_str(), s.status().ToString().c_str());
    abort();
  }
  return *s;
}

// The Symfony-named lock file of `resource` in `dir`.
inline std::string FlockFileOf(const std::string& dir, const std::string& resource) {
  return dir + "/" + ipclock::FlockFileName(resource);
}

// Runs `command` with sh, in another process; false if it failed.
inline bool Shell(const std::string& command) { return system(command.c_str()) == 0; }

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_FLOCK_TEST_UTIL_H_
