// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Making a FlockStore: its options, its default dir and its DSN.

#include <stdlib.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/named_file.h"
#include "core/options_driver.h"
#include "core/removeipc_guard.h"
#include "core/store_errors.h"
#include "platform/environment.h"
#include "platform/errors.h"
#include "stores/flock/flock_file.h"
#include "stores/flock/flock_inspect.h"
#include "stores/flock/flock_naming.h"
#include "stores/flock/flock_store.h"

namespace ipclock {

std::string FlockFileName(absl::string_view resource) {
  return SymfonyFlockFileName(resource);
}

std::string DefaultFlockDir() {
  if (EffectiveUid() == 0) return "/run/lock/ipclock";
  // A setuid program must not take its lock dir from the caller's
  // environment (platform/environment.h).
  const char* runtime = TrustedEnvironmentValue("XDG_RUNTIME_DIR");
  if (runtime != nullptr && runtime[0] == '/') {
    return absl::StrCat(runtime, "/ipclock");
  }
  return absl::StrCat("/tmp/ipclock-", EffectiveUid());
}

namespace {

absl::Status CheckFlockOptions(const FlockStoreOptions& options) {
  if ((options.dir_mode & ~07777u) != 0 || (options.file_mode & ~0777u) != 0) {
    return ConfigurationError("flock: dir_mode or file_mode out of range");
  }
  if (options.idle_files > kFlockMaxIdleFiles) {
    return ConfigurationError(absl::StrCat(
        "flock: idle_files=", options.idle_files, " is more than ", kFlockMaxIdleFiles));
  }
  if (options.fair && options.naming == FlockStoreOptions::Naming::kPath) {
    return ConfigurationError(
        "flock: fair=true keeps the waiters' queue in each lock file, which "
        "naming=path never writes (the file may be a user's data)");
  }
  return absl::OkStatus();
}

absl::StatusOr<FlockStoreOptions> FlockOptionsFromDsn(Dsn& dsn,
                                                      const StoreOptions& store_options) {
  FlockStoreOptions options;
  if (dsn.has_authority() && !dsn.host().empty()) {
    return BadDsn(dsn, "flock takes a dir as flock:///absolute/dir (three slashes)");
  }
  if (!dsn.path().empty()) {
    if (dsn.path()[0] != '/') {
      return BadDsn(dsn, "the lock dir must be an absolute path (flock:///dir)");
    }
    options.dir = dsn.path();
  }
  using Naming = FlockStoreOptions::Naming;
  absl::Status naming = dsn.TakeChoiceInto(
      "naming", {{"symfony", Naming::kSymfony}, {"path", Naming::kPath}}, &options.naming);
  if (!naming.ok()) return naming;
  if (absl::Status s = dsn.TakeModeInto("dir_mode", &options.dir_mode); !s.ok()) return s;
  if (absl::Status s = dsn.TakeModeInto("file_mode", &options.file_mode); !s.ok()) return s;
  if (absl::Status s = dsn.TakeBoolInto("record", &options.holder_record); !s.ok()) return s;
  if (absl::Status s = dsn.TakeBoolInto("map_record", &options.map_record); !s.ok()) return s;
  if (absl::Status s = dsn.TakeBoolInto("fair", &options.fair); !s.ok()) return s;
  if (absl::Status s = dsn.TakeIntInto("idle_files", &options.idle_files, 0,
                                       static_cast<long>(kFlockMaxIdleFiles));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = TakeRemoveIpcPolicy(dsn, store_options.remove_ipc, &options.remove_ipc);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return options;
}

absl::Status CheckFlockDsnOptions(const FlockStoreOptions& options, const Dsn& dsn) {
  if (absl::Status s = CheckFlockOptions(options); !s.ok()) return s;
  if (options.dir.empty()) return absl::OkStatus();
  // Made when missing; one that is there must be a dir.
  return CheckNamedFile(absl::StrCat("bad DSN \"", dsn.redacted(), "\""),
                        absl::StrCat("the lock dir ", options.dir), options.dir,
                        FileKind::kDirectory, IfMissing::kFine);
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewFlockStore(const FlockStoreOptions& options) {
  if (absl::Status s = CheckFlockOptions(options); !s.ok()) return s;
  std::string dir = options.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::shared_ptr<FlockDir> opened;
  if (options.naming == FlockStoreOptions::Naming::kSymfony || !dir.empty()) {
    if (dir.empty()) dir = DefaultFlockDir();
    const std::string describe = absl::StrCat("flock://", dir);
    if (absl::Status s = GuardRemoveIpc(kFlockEntry, dir, options.remove_ipc, describe);
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::shared_ptr<FlockDir>> d =
        FlockDir::Open(dir, options.dir_mode, options.map_record, describe);
    if (!d.ok()) return d.status();
    opened = *std::move(d);
    if (options.fair && !opened->pages_shared()) {
      return MisuseError(describe, "",
                         "fair=true keeps the waiters' queue in a shared mapping of each "
                         "lock file, and this lock dir is not on a filesystem whose pages "
                         "processes share (tmpfs, ext4, xfs, btrfs, f2fs)");
    }
  }
  return MakeFlockStore(options, std::move(dir), std::move(opened));
}

const StoreDriver kFlockDriver = {
    &PrepareFromOptions<&FlockOptionsFromDsn, &CheckFlockDsnOptions, &FlockCapabilities,
                        &NewFlockStore>,
    &ListFlockLocks};

}  // namespace ipclock
