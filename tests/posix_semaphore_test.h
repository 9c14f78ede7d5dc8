// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the source files of the POSIX semaphore suite share: where a
// resource's semaphore and registry are, and the registry's words; and the
// tests that live in posix_semaphore_test_foreign.cc, for
// posix_semaphore_test.cc's table.

#ifndef IPCLOCK_TESTS_POSIX_SEMAPHORE_TEST_H_
#define IPCLOCK_TESTS_POSIX_SEMAPHORE_TEST_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "ipclock/store.h"
#include "stores/posix_semaphore/posix_semaphore_page.h"

namespace ipclock_test {

std::shared_ptr<ipclock::Store> OpenStore(const std::string& dsn = "posix-semaphore");

struct Paths {
  std::string sem;  // /dev/shm/sem.<prefix>.<hex>
  std::string reg;  // /dev/shm/<prefix>.<hex>.reg
};
Paths PathsOf(const std::string& resource, absl::string_view prefix = "ipclock");

bool Exists(const std::string& path);

// Whether the semaphore or the registry of `resource` is in /dev/shm.
bool ObjectsExist(const std::string& resource, absl::string_view prefix = "ipclock");

// Maps the registry of `resource` read-write, as a scribbler would.
struct Mapped {
  int fd = -1;
  uint8_t* bytes = nullptr;
  size_t size = 0;
};
Mapped MapRegistry(const std::string& reg_path);

// Byte offsets of the page's words (stores/posix_semaphore/posix_semaphore_page.h).
inline constexpr size_t kOffPermits = offsetof(ipclock::RegistryPage, permits);
inline constexpr size_t kOffOwner = offsetof(ipclock::RegistryPage, owner);
inline constexpr size_t kOffHolders = offsetof(ipclock::RegistryPage, holders);
inline constexpr size_t kOffOrphans = offsetof(ipclock::RegistryPage, orphans);
inline constexpr size_t kOffSlots = offsetof(ipclock::RegistryPage, slots);

// The tests of posix_semaphore_test_foreign.cc, in one declaration, for the suite's table.
void ForeignFilesAreRefused(void**), FailedCreationLeavesNothing(void**),
    FailedRemovalIsFinishedLater(void**), CreationKilledAtRandomLeavesNothing(void**),
    ScribblerCrashesNothing(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_POSIX_SEMAPHORE_TEST_H_
