// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/client_library.h"

#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "ipclock_config.h"

namespace ipclock {

bool ClientLibrariesLoadedOnFirstUse() { return IPCLOCK_CLIENT_LIBRARIES_DLOPEN != 0; }

absl::Status ClientLibrary::Load(absl::string_view who) {
  if (loaded()) return absl::OkStatus();
  std::lock_guard<std::mutex> guard(mu_);
  if (loaded()) return absl::OkStatus();
#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
  auto unusable = [&](absl::string_view why) {
    return absl::UnimplementedError(absl::StrCat("ipclock: ", who, ": ", info_.what, ", ",
                                                 info_.soname, ", could not be loaded (install ",
                                                 info_.package, "): ", why));
  };
  const char* file = file_for_test_.load();
  // RTLD_NODELETE: the table keeps pointers into it for the life of the
  // process. RTLD_LOCAL: its symbols stay out of the global scope, where
  // they could resolve another library's references.
  void* handle =
      dlopen(file != nullptr ? file : info_.soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* err = dlerror();
    return unusable(err != nullptr ? err : "dlopen failed");
  }
  for (const ClientSymbolSlot& slot : slots_) {
    dlerror();
    void* address = dlsym(handle, slot.name);
    if (address == nullptr) {
      // A library too old for ipclock (sqlite3_changes64 came with 3.37).
      const char* err = dlerror();
      const std::string why = absl::StrCat("it has no symbol ", slot.name,
                                           err != nullptr ? absl::StrCat(" (", err, ")") : "");
      dlclose(handle);
      for (const ClientSymbolSlot& s : slots_) s.symbol->set_address(nullptr);
      return unusable(why);
    }
    slot.symbol->set_address(address);
  }
#else
  static_cast<void>(who);
  for (const ClientSymbolSlot& slot : slots_) slot.symbol->set_address(slot.linked);
#endif
  loaded_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

}  // namespace ipclock
