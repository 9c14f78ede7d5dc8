// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the process was started with that decides where and as whom its
// locks live: its effective user and its environment.
//
// Caveat: a variable that names a path or a policy must be read with
// TrustedEnvironmentValue(). In a setuid or setgid program the environment
// is the invoking user's; a lock dir taken from it would let that user point
// a privileged program's locks (and the files it creates) anywhere.

#ifndef IPCLOCK_PLATFORM_ENVIRONMENT_H_
#define IPCLOCK_PLATFORM_ENVIRONMENT_H_

#include <sys/types.h>

namespace ipclock {

// geteuid(): the user whose lock dir and IPC objects the process uses.
uid_t EffectiveUid();

// The variable's value, or null when unset.
const char* EnvironmentValue(const char* name);

// The same, but null in a program running setuid or setgid (or with file
// capabilities): secure_getenv(3).
const char* TrustedEnvironmentValue(const char* name);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_ENVIRONMENT_H_
