// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the shm store's suites share: opening a store, mapping a segment as
// another process of the same user could (to forge or corrupt it), and
// checking a status message. Include it last: it ends with test_util.h,
// which pulls in cmocka.h.

#ifndef IPCLOCK_TESTS_SHM_TEST_UTIL_H_
#define IPCLOCK_TESTS_SHM_TEST_UTIL_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/lock_factory.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "ipclock/stores/shm_store.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

// StoreFromDsn, failing the test on an error.
inline std::shared_ptr<ipclock::Store> OpenShmStore(const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) fail_msg("StoreFromDsn(%s): %s", dsn.c_str(), store.status().ToString().c_str());
  return *store;
}

// The same for forked children, which must not call CMocka: nullptr on an
// error.
inline std::shared_ptr<ipclock::Store> OpenShmStoreOrNull(const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  return store.ok() ? *store : nullptr;
}

// For forked children too: a Lock on `resource` through a store of the
// segment `name`, not yet acquired; an error if either cannot be made.
inline absl::StatusOr<ipclock::Lock> LockInSegment(const std::string& name,
                                                   const std::string& resource) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store =
      ipclock::StoreFromDsn(absl::StrCat("shm://", name));
  if (!store.ok()) return store.status();
  return ipclock::Lock::Create(*store, resource);
}

// For forked children too: `resources` of the segment `name`, each acquired
// within 5 s, in order; empty if the store or any of them cannot be had.
inline std::vector<ipclock::Lock> AcquiredInSegment(const std::string& name,
                                                   std::initializer_list<const char*> resources) {
  std::vector<ipclock::Lock> held;
  std::shared_ptr<ipclock::Store> store = OpenShmStoreOrNull(absl::StrCat("shm://", name));
  if (store == nullptr) return held;
  for (const char* resource : resources) {
    absl::StatusOr<ipclock::Lock> lock = ipclock::AcquireLock(store, resource, absl::Seconds(5));
    if (!lock.ok()) return {};
    held.push_back(*std::move(lock));
  }
  return held;
}

// A segment name unique to this run (UniqueShmName), whose segment is
// removed when the test's scope ends. The removal must succeed: a test
// that holds one also asserts that its segment is still there at its end.
// Declare it before the stores and locks on the segment, so that they are
// gone when it goes.
class ScratchSegment {
 public:
  explicit ScratchSegment(absl::string_view tag) : name_(UniqueShmName(tag)) {}
  ~ScratchSegment() { ASSERT_OK(ipclock::RemoveShmSegment(name_)); }
  ScratchSegment(const ScratchSegment&) = delete;
  ScratchSegment& operator=(const ScratchSegment&) = delete;

  const std::string& name() const { return name_; }

 private:
  const std::string name_;
};

inline std::string ShmSegmentPath(const std::string& name) {
  return absl::StrCat("/dev/shm/ipclock.", name);
}

inline bool ShmSegmentExists(const std::string& name) {
  struct stat st;
  return stat(ShmSegmentPath(name).c_str(), &st) == 0;
}

// The whole segment mapped read-write (its size in `*size`), or nullptr.
// Plain calls, no CMocka: forked children use it too.
inline void* MapShmSegment(const std::string& name, size_t* size) {
  int fd = shm_open(absl::StrCat("/ipclock.", name).c_str(), O_RDWR, 0);
  if (fd < 0) return nullptr;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return nullptr;
  }
  *size = static_cast<size_t>(st.st_size);
  void* p = mmap(nullptr, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? nullptr : p;
}

inline void AssertMessageHas(const absl::Status& s, absl::string_view needle) {
  if (s.message().find(needle) == absl::string_view::npos) {
    fail_msg("expected \"%s\" in: %s", std::string(needle).c_str(), s.ToString().c_str());
  }
}

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_SHM_TEST_UTIL_H_
