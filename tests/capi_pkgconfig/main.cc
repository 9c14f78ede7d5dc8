// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A C++17 program built against an installed ipclock as a user's program
// would be: only <ipclock/ipclock.h>, compiled and linked with nothing but
// what a build system asks for (pkg-config's or CMake's flags). It holds a
// lock on each store it is given and checks that a second lock on the same
// resource is refused until the first is released.
//
// Usage: main DSN...   (exits 0 if every DSN works)

#include <cstdio>
#include <memory>
#include <string>

#include <ipclock/ipclock.h>

namespace {

absl::Status Check(const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) return store.status();
  ipclock::LockFactory factory(*store);
  absl::StatusOr<ipclock::Lock> first = factory.CreateLock("consumer");
  if (!first.ok()) return first.status();
  absl::StatusOr<ipclock::Lock> second = factory.CreateLock("consumer");
  if (!second.ok()) return second.status();
  if (absl::Status s = first->Acquire(absl::Seconds(10)); !s.ok()) return s;
  absl::StatusOr<bool> got = second->TryAcquire();
  if (!got.ok()) return got.status();
  if (*got) return absl::InternalError("a second lock was granted while the first held");
  if (absl::Status s = first->Release(); !s.ok()) return s;
  got = second->TryAcquire();
  if (!got.ok()) return got.status();
  if (!*got) return absl::InternalError("the lock stayed busy after its release");
  return second->Release();
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    absl::Status s = Check(argv[i]);
    if (s.ok()) {
      std::printf("%s: ok\n", argv[i]);
    } else {
      std::fprintf(stderr, "%s: %s\n", argv[i], s.ToString().c_str());
      ++failures;
    }
  }
  return failures == 0 && argc > 1 ? 0 : 1;
}
