// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The library's version, from the same generated header the programs
// compile with: a program that compares the two learns whether its headers
// and its libipclock.a came from one install.

#include "ipclock/c.h"
#include "ipclock/version.h"

extern "C" {

const char* ipclock_version(void) { return IPCLOCK_VERSION_STRING; }

int ipclock_version_number(void) { return IPCLOCK_VERSION_NUMBER; }

}  // extern "C"
