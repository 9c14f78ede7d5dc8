// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes the DSN parser and StoreFromDsn. The first byte picks what the
// rest is:
//   0: a whole DSN for Dsn::Parse, its accessors and option readers;
//   1: the query of an in-memory DSN ("in-memory?<rest>");
//   2: the query of a flock DSN on a private temp dir, so that the fuzzer
//      never creates dirs elsewhere;
//   3: a whole DSN for FindStore(), and queries of the local stores for
//      ListHeldLocks(), which reads only (flock on the private dir).
// Other stores are left out on purpose: they create IPC objects or connect
// to servers as soon as they are built. (That errors never show a password
// is checked by tests/hostile_host_test.cc.)

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store_factory.h"

namespace {

std::string* g_dir = nullptr;

// Stores are only built, never locked, so the dir stays empty.
void RemoveTempDir() { rmdir(g_dir->c_str()); }

const std::string& TempDir() {
  if (g_dir == nullptr) {
    char tmpl[] = "/tmp/ipclock-fuzz-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) abort();
    g_dir = new std::string(tmpl);
    atexit(RemoveTempDir);
  }
  return *g_dir;
}

void ExerciseDsn(absl::string_view text) {
  absl::StatusOr<ipclock::Dsn> dsn = ipclock::Dsn::Parse(text);
  if (!dsn.ok()) return;
  dsn->PeekOption("mode");
  dsn->TakeBool("record", true).IgnoreError();
  dsn->TakeInt("capacity", 1, 1, 65536).IgnoreError();
  dsn->TakeMode("mode", 0600).IgnoreError();
  dsn->TakeSeconds("timeout", 1.0).IgnoreError();
  dsn->CheckAllOptionsUsed().IgnoreError();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  ipclock::StoreOptions options;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  switch (data[0] % 4) {
    case 0:
      ExerciseDsn(rest);
      break;
    case 1:
      ipclock::StoreFromDsn(absl::StrCat("in-memory?", rest), options).IgnoreError();
      break;
    case 2:
      // A store may create its dir with a fuzzed dir_mode, never elsewhere.
      ipclock::StoreFromDsn(absl::StrCat("flock://", TempDir(), "?", rest), options)
          .IgnoreError();
      break;
    case 3:
      ipclock::FindStore(rest).IgnoreError();
      ipclock::ListHeldLocks(absl::StrCat("flock://", TempDir(), "?", rest)).IgnoreError();
      ipclock::ListHeldLocks(absl::StrCat("posix-semaphore:?", rest)).IgnoreError();
      ipclock::ListHeldLocks(absl::StrCat("semaphore:?", rest)).IgnoreError();
      break;
  }
  return 0;
}
