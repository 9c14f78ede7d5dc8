// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: store_factory.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// `StoreFromDsn()` builds a store from a DSN string, so that where locks live
// is configuration, not code. The names follow Symfony Lock's DSNs where one
// exists:
//
//   flock                      lock files in the default lock dir
//   flock:///var/lock/myapp    lock files in /var/lock/myapp
//   in-memory                  this process only (tests, single-process use)
//
// and later stores add their own (`semaphore`, `posix-semaphore`,
// `shm://NAME`, `redis://...`, `postgresql+advisory://...`); doc/stores.md lists
// every scheme and its query options. A DSN naming a store that this build
// left out (a disabled Meson feature) is Unimplemented, never silently
// replaced by another store.

#ifndef IPCLOCK_STORE_FACTORY_H_
#define IPCLOCK_STORE_FACTORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/diagnostics.h"
#include "ipclock/metrics.h"
#include "ipclock/remove_ipc.h"
#include "ipclock/store.h"

namespace ipclock {

struct StoreOptions {
  // For the local stores whose locks systemd-logind may delete (remove_ipc.h);
  // a DSN's `removeipc=` option takes precedence.
  RemoveIpcPolicy remove_ipc = RemoveIpcPolicy::kWarn;
  // Where this store's diagnostics go (diagnostics.h): what is found while
  // it is built (a RemoveIPC risk, keys named without a secret, a fallback
  // in use) and, through `Store::SetDiagnosticSink()`, what the store and
  // its locks report afterwards. Empty: the process default.
  DiagnosticSink diagnostics;
  // What Locks on the store record (metrics.h); a DSN's `metrics=` option
  // (`on`, `off`, `every`; any store) takes precedence.
  MetricsMode metrics = MetricsMode::kOn;
  // What the caller will ask of the store, checked against what the DSN's
  // store can do before anything is built or connected: a store without
  // shared locks, or one that does not count, is InvalidArgument at once,
  // not after its server has answered.
  bool shared_locks = false;
  uint32_t permits = 1;
  // The lease the caller's locks will ask for (LockOptions::ttl), checked
  // against the store's Capabilities::max_lease; zero checks nothing.
  absl::Duration lease = absl::ZeroDuration();
};

// The DSN of the default store: "flock".
inline constexpr absl::string_view kDefaultDsn = "flock";

// Builds the store that `dsn` names. InvalidArgument for a malformed DSN or
// unknown option, Unimplemented for a store compiled out of this build, or
// the store's own error (e.g. PermissionDenied for an unusable lock dir).
// The DSN is parsed once and checked as CheckDsn() checks it before
// anything is created or connected. Errors are classed as ipclock/errors.h
// says: only Unavailable is worth trying again.
//
// Descriptors. If any of the standard streams (descriptors 0, 1 and 2) is
// closed, /dev/null is opened there first: a lock file, segment or server
// connection must not become the process's stderr, where whatever is
// written to stderr would land in it. Every descriptor the store opens is
// close-on-exec, those of the client libraries included where the library
// lets ipclock reach them (hiredis, MariaDB Connector/C; libpq and etcd's
// connections are so already; the ZooKeeper client's are not reachable:
// a program that forks and execs while it holds ZooKeeper locks should
// close descriptors from 3 up in the child, as `ipclock run` does).
absl::StatusOr<std::shared_ptr<Store>> StoreFromDsn(
    absl::string_view dsn, const StoreOptions& options = StoreOptions());

// Checks `dsn` as StoreFromDsn() would, without building the store: nothing
// is created, opened for writing, or connected to, and no client library
// is handed anything. Finds every permanent fault the DSN itself carries
// (ipclock/errors.h): a malformed DSN, an unknown option, a value out of
// range, a file of the wrong type, an input the store's client library
// cannot take, `options`' needs the store cannot meet. Returns the
// capabilities the store will have. What only building shows (a server
// that is down, refused credentials, an unsafe lock dir) is not checked.
absl::StatusOr<Capabilities> CheckDsn(absl::string_view dsn,
                                      const StoreOptions& options = StoreOptions());

// The DSN schemes this build accepts, for help texts.
std::vector<std::string> SupportedDsnSchemes();

}  // namespace ipclock

#endif  // IPCLOCK_STORE_FACTORY_H_
