// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Symfony FlockStore's lock file names, byte for byte (spec/interop.md):
// `sf.<A>.<B>.lock`, where A is the resource with every run of bytes outside
// [A-Za-z0-9._-] replaced by one '-' and cut to 50 bytes, and B is the first
// 7 characters of the standard base64 of SHA-256(resource) with '/' -> '_'.

#ifndef IPCLOCK_STORES_FLOCK_NAMING_H_
#define IPCLOCK_STORES_FLOCK_NAMING_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ipclock {

std::string SymfonyFlockFileName(absl::string_view resource);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_FLOCK_NAMING_H_
