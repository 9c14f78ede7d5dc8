// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/store.h"

#include <vector>

#include "absl/strings/str_join.h"

namespace ipclock {

Store::~Store() = default;

absl::StatusOr<WaitWord> Store::GetWaitWord(Key&) { return WaitWord(); }

std::string CapabilitiesToString(const Capabilities& c) {
  std::vector<absl::string_view> parts;
  parts.push_back(c.scope == Scope::kProcess ? "process"
                 : c.scope == Scope::kLocal ? "local"
                                            : "remote");
  if (c.blocking) parts.push_back("blocking");
  if (c.expiring) parts.push_back("expiring");
  if (c.shared) parts.push_back("shared");
  if (c.serializable) parts.push_back("serializable");
  if (c.fencing) parts.push_back("fencing");
  if (c.owner_death) parts.push_back("owner-death");
  if (c.counting) parts.push_back("counting");
  return absl::StrJoin(parts, ",");
}

}  // namespace ipclock
