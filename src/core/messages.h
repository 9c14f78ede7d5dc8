// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Emitting messages to the program's sink (ipclock/messages.h).

#ifndef IPCLOCK_CORE_MESSAGES_H_
#define IPCLOCK_CORE_MESSAGES_H_

#include "absl/strings/string_view.h"
#include "ipclock/messages.h"

namespace ipclock {

// Hands `text` (which starts with "ipclock: ") to the current sink.
void EmitMessage(MessageSeverity severity, absl::string_view text);

}  // namespace ipclock

#endif  // IPCLOCK_CORE_MESSAGES_H_
