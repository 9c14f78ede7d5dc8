// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Store handles of the C API (c.h, "Stores"): what every open function
// shares, and what a handle says of its store. The open functions are in
// files of their own (store_open.cc, store_open_kinds.cc), so that a
// program links the store factory it calls and no other.

#include "capi/store_handle.h"

#include <errno.h>

#include <memory>
#include <new>
#include <string>
#include <utility>

#include "capi/diagnostic_handlers.h"
#include "capi/errors.h"
#include "capi/handles.h"
#include "ipclock/c.h"
#include "ipclock/remove_ipc.h"
#include "ipclock/store.h"
#include "ipclock/stores/slot_semaphore_store.h"
#include "absl/strings/str_cat.h"

namespace ipclock::capi {

int StoreOptionsFromC(const struct ipclock_store_options* opts, StoreOptions* options,
                      char** error, absl::string_view function) {
  if (opts == nullptr) return 0;
  switch (opts->remove_ipc) {
    case IPCLOCK_REMOVEIPC_WARN:
      options->remove_ipc = RemoveIpcPolicy::kWarn;
      break;
    case IPCLOCK_REMOVEIPC_REFUSE:
      options->remove_ipc = RemoveIpcPolicy::kRefuse;
      break;
    case IPCLOCK_REMOVEIPC_IGNORE:
      options->remove_ipc = RemoveIpcPolicy::kIgnore;
      break;
    default:
      return FailMaking(error, -EINVAL,
                        absl::StrCat("ipclock: ", function, ": unknown remove_ipc policy ",
                                     opts->remove_ipc));
  }
  options->diagnostics = SinkFor(opts->diagnostics, opts->diagnostics_arg);
  return 0;
}

int FinishOpening(absl::StatusOr<std::shared_ptr<Store>> store, ipclock_store** out,
                  char** error) {
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

}  // namespace ipclock::capi

extern "C" {

void ipclock_store_close(ipclock_store* store) { delete store; }

int ipclock_store_open_semaphores(ipclock_store* store, ipclock_store** out, char** error) {
  if (int rc = ipclock::capi::StartMaking(out, error, store != nullptr,
                                          "ipclock_store_open_semaphores");
      rc != 0) {
    return rc;
  }
  return ipclock::capi::FinishOpening(ipclock::SemaphoreStoreFor(store->store), out, error);
}

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
  if (caps.weighted) bits |= IPCLOCK_CAP_WEIGHTED;
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
