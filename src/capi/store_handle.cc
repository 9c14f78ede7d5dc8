// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Store handles of the C API (c.h, "Stores").

#include <errno.h>

#include <memory>
#include <new>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "capi/diagnostic_handlers.h"
#include "capi/errors.h"
#include "capi/handles.h"
#include "ipclock/c.h"
#include "ipclock/remove_ipc.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"

namespace {

using ipclock::capi::FailMaking;

}  // namespace

extern "C" {

int ipclock_store_open(const char* dsn, const struct ipclock_store_options* opts,
                       ipclock_store** out, char** error) {
  if (int rc = ipclock::capi::StartMaking(out, error, dsn != nullptr, "ipclock_store_open");
      rc != 0) {
    return rc;
  }
  ipclock::StoreOptions options;
  if (opts != nullptr) {
    switch (opts->remove_ipc) {
      case IPCLOCK_REMOVEIPC_WARN:
        options.remove_ipc = ipclock::RemoveIpcPolicy::kWarn;
        break;
      case IPCLOCK_REMOVEIPC_REFUSE:
        options.remove_ipc = ipclock::RemoveIpcPolicy::kRefuse;
        break;
      case IPCLOCK_REMOVEIPC_IGNORE:
        options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
        break;
      default:
        return FailMaking(error, -EINVAL,
                          "ipclock: ipclock_store_open: unknown remove_ipc policy " +
                              std::to_string(opts->remove_ipc));
    }
    options.diagnostics = ipclock::capi::SinkFor(opts->diagnostics, opts->diagnostics_arg);
  }
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn, options);
  if (!store.ok()) return FailMaking(error, store.status());
  ipclock_store* handle = new (std::nothrow) ipclock_store;
  if (handle == nullptr) {
    return FailMaking(error, -ENOMEM, "ipclock: out of memory for a store handle");
  }
  handle->store = *std::move(store);
  handle->name = std::string(handle->store->name());
  handle->description = handle->store->Describe();
  *out = handle;
  return 0;
}

void ipclock_store_close(ipclock_store* store) { delete store; }

const char* ipclock_store_name(const ipclock_store* store) {
  return store == nullptr ? "" : store->name.c_str();
}

const char* ipclock_store_describe(const ipclock_store* store) {
  return store == nullptr ? "" : store->description.c_str();
}

unsigned ipclock_store_capabilities(const ipclock_store* store) {
  if (store == nullptr) return 0;
  const ipclock::Capabilities caps = store->store->capabilities();
  unsigned bits = 0;
  if (caps.blocking) bits |= IPCLOCK_CAP_BLOCKING;
  if (caps.expiring) bits |= IPCLOCK_CAP_EXPIRING;
  if (caps.shared) bits |= IPCLOCK_CAP_SHARED;
  if (caps.serializable) bits |= IPCLOCK_CAP_SERIALIZABLE;
  if (caps.fencing) bits |= IPCLOCK_CAP_FENCING;
  if (caps.owner_death) bits |= IPCLOCK_CAP_OWNER_DEATH;
  if (caps.counting) bits |= IPCLOCK_CAP_COUNTING;
  return bits;
}

int ipclock_store_scope(const ipclock_store* store) {
  if (store == nullptr) return -EINVAL;
  switch (store->store->capabilities().scope) {
    case ipclock::Scope::kProcess:
      return IPCLOCK_SCOPE_PROCESS;
    case ipclock::Scope::kLocal:
      return IPCLOCK_SCOPE_LOCAL;
    case ipclock::Scope::kRemote:
      return IPCLOCK_SCOPE_REMOTE;
  }
  return IPCLOCK_SCOPE_LOCAL;
}

int ipclock_store_set_diagnostic_handler(ipclock_store* store, ipclock_diagnostic_fn fn,
                                         void* arg) {
  if (store == nullptr) return -EINVAL;
  store->store->SetDiagnosticSink(ipclock::capi::SinkFor(fn, arg));
  return 0;
}

}  // extern "C"
