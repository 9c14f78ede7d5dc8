// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/environment.h"

#include <stdlib.h>
#include <unistd.h>

namespace ipclock {

uid_t EffectiveUid() { return geteuid(); }

const char* EnvironmentValue(const char* name) { return getenv(name); }

const char* TrustedEnvironmentValue(const char* name) { return secure_getenv(name); }

}  // namespace ipclock
