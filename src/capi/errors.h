// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// How the C API reports a failure: a negative errno value, and the message
// on the lock handle the call was about, or through the `char **error` of a
// call that makes a handle (c.h, "ERRORS").

#ifndef IPCLOCK_CAPI_ERRORS_H_
#define IPCLOCK_CAPI_ERRORS_H_

#include <errno.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "capi/handles.h"

namespace ipclock {
namespace capi {

// The one mapping from canonical codes to the C API's errno values.
int CodeFor(absl::StatusCode code);

// Keeps `message` on the lock and returns `code`.
int Fail(ipclock_lock* lock, int code, absl::string_view message);
int Fail(ipclock_lock* lock, const absl::Status& status);

// For calls that make a handle: sets `*error` (if `error` is not null) to a
// malloc()ed copy of `message`, and returns `code`.
int FailMaking(char** error, int code, absl::string_view message);
int FailMaking(char** error, const absl::Status& status);

// A malloc()ed, NUL-terminated copy of `text`; null if out of memory.
char* MallocCopy(absl::string_view text);

// What every call that makes a handle does first: clears `*out` and
// `*error` (where given), and returns -EINVAL, said in `*error`, when
// `out` is null or `arguments_given` is false; 0 otherwise.
template <typename Handle>
int StartMaking(Handle** out, char** error, bool arguments_given, absl::string_view function) {
  if (error != nullptr) *error = nullptr;
  if (out != nullptr) *out = nullptr;
  if (out != nullptr && arguments_given) return 0;
  return FailMaking(error, -EINVAL, absl::StrCat("ipclock: ", function, ": NULL argument"));
}

}  // namespace capi
}  // namespace ipclock

#endif  // IPCLOCK_CAPI_ERRORS_H_
