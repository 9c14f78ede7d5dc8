// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes the readers of logind.conf (and its drop-ins) and login.defs on
// text in memory: whatever a file holds, they must not crash and must
// leave a setting that names where it came from.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "platform/removeipc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  ipclock::RemoveIpcSetting setting;
  ipclock::ApplyLogindConfText("/etc/systemd/logind.conf", text, &setting);
  if (setting.source.empty()) abort();
  ipclock::ParseSysUidMax(text);
  ipclock::ParseSystemdBoolean(text);
  return 0;
}
