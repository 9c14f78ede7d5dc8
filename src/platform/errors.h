// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Status helpers. Every error ipclock returns names the store, the resource
// and, where the OS refused something, the call and its errno, e.g.
//
//   flock:///run/lock/app: resource "invoice-42": open
//   /run/lock/app/sf.invoice-42.PDBLwhy.lock: Permission denied [EACCES]
//
// The code says the fault's class, as include/ipclock/errors.h tables them
// (stores use the constructors of core/store_errors.h); ErrnoToCode() is
// that table for errno.

#ifndef IPCLOCK_PLATFORM_ERRORS_H_
#define IPCLOCK_PLATFORM_ERRORS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ipclock {

// The canonical code for an errno value.
absl::StatusCode ErrnoToCode(int err);

// "ENOENT" for ENOENT: the symbolic name, which survives translation of
// strerror's text.
absl::string_view ErrnoName(int err);

// A resource name fit for a message: quoted, C-escaped, cut to 96 bytes.
std::string QuoteResource(absl::string_view resource);

// `<store>: resource "<name>": <what>: <strerror> [<ENAME>]`. `resource` may
// be empty for errors that concern the store as a whole.
absl::Status ErrnoError(int err, absl::string_view store,
                        absl::string_view resource, absl::string_view what);

// `<store>: resource "<name>": <message>` with the given code.
absl::Status StoreError(absl::StatusCode code, absl::string_view store,
                        absl::string_view resource, absl::string_view message);

// `status` with its message put in `context`: "ipclock: <context>: <message>",
// the message's own leading "ipclock: " dropped so that it is said once.
absl::Status InContext(absl::string_view context, const absl::Status& status);

// The Aborted of a key that holds nothing: "the lock is not held".
absl::Status NotHeldError(absl::string_view store, absl::string_view resource);

// The FailedPrecondition of a forked child that uses what its parent
// acquired before the fork: "this <what> was acquired by the parent of this
// forked process; <consequence>".
absl::Status ParentAcquiredError(absl::string_view store, absl::string_view resource,
                                 absl::string_view what, absl::string_view consequence);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_ERRORS_H_
