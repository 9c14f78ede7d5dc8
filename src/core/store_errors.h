// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: store_errors.h
// -----------------------------------------------------------------------------
//
// The errors a store returns, one constructor per fault class of
// ipclock/errors.h, so that a store says what went wrong (a configuration, a
// refusal, a lock lost ...) and never spells a status code: the code, which
// the CLI's exit statuses and the C API's error numbers are read from,
// follows from the class. tests/store_errors_test.sh holds src/stores/ to it.
//
// Each constructor comes in two forms: `(store, resource, message)` makes
// `<store>: resource "<resource>": <message>` (`<store>: <message>` without a
// resource), as StoreError() in platform/errors.h does; `(message)` takes the
// message as it is, for a part of a store that says what failed and leaves
// the naming to its caller.
//
// A class of two codes has a constructor for its second code where a store
// returns it (RangeError, the configuration class's OutOfRange; no store
// returns Unauthenticated or Cancelled); the "other" class has one for each
// code a store returns there. A store that maps its client library's codes, its
// server's replies or errno values to classes does so in one function that
// returns a `StoreErrorMaker`, one of the constructors below.

#ifndef IPCLOCK_CORE_STORE_ERRORS_H_
#define IPCLOCK_CORE_STORE_ERRORS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ipclock/errors.h"

namespace ipclock {

// One of the three-argument constructors below, as chosen by a store's one
// mapping of its client library's codes.
using StoreErrorMaker = absl::Status (*)(absl::string_view store, absl::string_view resource,
                                         absl::string_view message);

// configuration (InvalidArgument): a DSN, an option or an input that no
// retry will make right.
absl::Status ConfigurationError(absl::string_view message);
absl::Status ConfigurationError(absl::string_view store, absl::string_view resource,
                                absl::string_view message);

// configuration (OutOfRange): a value outside what the server takes.
absl::Status RangeError(absl::string_view message);
absl::Status RangeError(absl::string_view store, absl::string_view resource,
                        absl::string_view message);

// refused (PermissionDenied): credentials refused, a file this user may not use.
absl::Status RefusedError(absl::string_view message);
absl::Status RefusedError(absl::string_view store, absl::string_view resource,
                          absl::string_view message);

// not built (Unimplemented): a store or a feature this build left out.
absl::Status NotBuiltError(absl::string_view message);
absl::Status NotBuiltError(absl::string_view store, absl::string_view resource,
                           absl::string_view message);

// transient (Unavailable): the only class that is tried again.
absl::Status TransientError(absl::string_view message);
absl::Status TransientError(absl::string_view store, absl::string_view resource,
                            absl::string_view message);

// lost (Aborted): a lock lost while held, or not held at all.
absl::Status LostError(absl::string_view message);
absl::Status LostError(absl::string_view store, absl::string_view resource,
                       absl::string_view message);

// misuse (FailedPrecondition): a call the lock's or the store's state does
// not allow.
absl::Status MisuseError(absl::string_view message);
absl::Status MisuseError(absl::string_view store, absl::string_view resource,
                         absl::string_view message);

// other (NotFound): a thing the store looked for is not there.
absl::Status MissingError(absl::string_view message);
absl::Status MissingError(absl::string_view store, absl::string_view resource,
                          absl::string_view message);

// other (AlreadyExists): a thing the store was to make is there already.
absl::Status ExistsError(absl::string_view message);
absl::Status ExistsError(absl::string_view store, absl::string_view resource,
                         absl::string_view message);

// other (ResourceExhausted): out of disk, memory, slots or semaphores.
absl::Status OutOfResourcesError(absl::string_view message);
absl::Status OutOfResourcesError(absl::string_view store, absl::string_view resource,
                                 absl::string_view message);

// other (DataLoss): a database file that is corrupt.
absl::Status CorruptionError(absl::string_view message);
absl::Status CorruptionError(absl::string_view store, absl::string_view resource,
                             absl::string_view message);

// other (Internal): an OS or server error that fits no class, a reply the
// store cannot make sense of.
absl::Status UnexpectedError(absl::string_view message);
absl::Status UnexpectedError(absl::string_view store, absl::string_view resource,
                             absl::string_view message);

// Not a failure (DeadlineExceeded): the lock stayed busy until the deadline,
// as Lock::Acquire() says it.
absl::Status StayedBusyError(absl::string_view message);
absl::Status StayedBusyError(absl::string_view store, absl::string_view resource,
                             absl::string_view message);

// The constructor for errno `err`, by ErrnoToCode() (platform/errors.h):
// for a store that words an OS error its own way rather than as ErrnoError()
// does.
StoreErrorMaker FaultOfErrno(int err);

// The class of the errors `fault` makes.
FaultClass ClassOf(StoreErrorMaker fault);

// `fault`'s error with `message` as it is (the one-argument form of the
// constructor that `fault` names).
absl::Status ErrorOf(StoreErrorMaker fault, absl::string_view message);

// `fault`'s code with `message`: a failure told again with more context.
absl::Status Restated(const absl::Status& fault, absl::string_view message);
absl::Status Restated(const absl::Status& fault, absl::string_view store,
                      absl::string_view resource, absl::string_view message);

}  // namespace ipclock

#endif  // IPCLOCK_CORE_STORE_ERRORS_H_
