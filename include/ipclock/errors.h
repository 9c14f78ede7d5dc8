// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: errors.h
// -----------------------------------------------------------------------------
//
// How ipclock reports what went wrong. Every failure is an `absl::Status`
// whose code puts it in one of the classes below; the code is the contract,
// and the message is for people: it names the store, the resource, and what
// was wrong (an option, its value and what was expected; a call and its OS
// error). The `ipclock` CLI's exit statuses (doc/ipclock.1) and the C API's
// error numbers (c.h) are read from the code alone, so one fault gives one
// answer in every store, every command and every API.
//
// A store classes each failure once, in one place per store (its client
// library's error codes, its server's replies, the OS errors of its files),
// by this table, and makes the status with the constructor of its class
// (src/core/store_errors.h: ConfigurationError, RefusedError, NotBuiltError,
// TransientError, LostError, MisuseError, and for "other" MissingError,
// OutOfResourcesError, UnexpectedError ...), never with a code of its own. Faults that ipclock can see before a client library would
// (an option's value, a count or length the library cannot take, a file of
// the wrong type) are found in the store's own DSN check, before anything is
// opened or connected.
//
//   class          code                 waited out  CLI  C API
//   -------------  -------------------  ----------  ---  ----------
//   configuration  kInvalidArgument,    no          64   -EINVAL
//                  kOutOfRange
//       a malformed DSN; an unknown option; a value that is empty, of the
//       wrong type or out of range; a file of the wrong type where a DSN, an
//       option or a lock names a file (a FIFO, a device, a socket, a
//       directory, a symbolic link where none is followed, a file of /proc
//       or /sys); an input a client library cannot take; TLS required
//       but not offered, or a server certificate that fails verification; a
//       server that answers "bad arguments"; a name the server can never
//       accept (no such database); a store asked for what it cannot do (a
//       shared lock, more than one permit, an unbounded lease)
//   refused        kPermissionDenied,   no          77   -EACCES
//                  kUnauthenticated
//       credentials refused; a file or dir this user may not use, or one
//       that is unsafe (owned or writable by another user)
//   not built      kUnimplemented       no          69   -ENOSYS
//       a store or a feature this build left out
//   transient      kUnavailable         yes         69   -EAGAIN
//       connection refused, reset or timed out; no route; a server that is
//       starting, restarting or shutting down; too many connections; a Unix
//       socket that does not exist yet
//   lost           kAborted, kCancelled no          79*  -ECANCELED
//       a lock lost while held (its lease ran out, its file, segment or
//       session went away); *`ipclock run` exits 79 for a lock lost while
//       COMMAND ran or found gone at its release, 71 before it held it
//   misuse         kFailedPrecondition  no          71   -EPERM
//       a call the lock's state does not allow (a release from another
//       thread on shm, a forked child's use of its parent's key)
//   other          anything else        no          71   -ENOENT,
//                                                        -ENOSPC, -EIO...
//       an OS or server error that fits none of the above: out of disk,
//       memory or semaphores, a reply the store cannot make sense of
//
// "Waited out": only a transient failure is tried again, by `ipclock run`
// (for as long as `-w` allows; without `-w`, for as long as it takes once
// the store has answered, since a server that never did may be a typo),
// by degraded mode and by a combined store's members; a wait in a store
// that loses its connection reconnects until its deadline. Every other
// failure is returned at once: retrying cannot mend a configuration.
// (DeadlineExceeded is not a failure of a store: `Lock::Acquire` returns it
// when the lock stayed busy until the deadline. Nor is the Cancelled that
// it returns when its `Canceller`, lock.h, ended the wait.)

#ifndef IPCLOCK_ERRORS_H_
#define IPCLOCK_ERRORS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ipclock {

enum class FaultClass {
  kConfiguration,
  kRefused,
  kNotBuilt,
  kTransient,
  kLost,
  kMisuse,
  kOther,
};

// The class of a failure, by its code as in the table above. OK is kOther:
// ask only about failures.
FaultClass FaultClassOf(const absl::Status& status);

// The code a store returns for a fault of class `fault` (the first code of
// its row above; kOther is kInternal).
absl::StatusCode CodeOf(FaultClass fault);

// Whether trying again later may succeed with nothing changed here: true for
// the transient class only.
inline bool IsTransient(const absl::Status& status) { return absl::IsUnavailable(status); }

}  // namespace ipclock

#endif  // IPCLOCK_ERRORS_H_
