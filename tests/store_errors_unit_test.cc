// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The stores' error constructors (core/store_errors.h): each gives the code
// of its row of ipclock/errors.h's table, and the message as a store words
// it; the helpers keep a code while they change the message.

#include <errno.h>

#include <string>

#include "core/store_errors.h"
#include "ipclock/errors.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::FaultClass;
using ipclock::StoreErrorMaker;

struct Row {
  StoreErrorMaker make;
  absl::Status (*alone)(absl::string_view message);
  absl::StatusCode code;
  FaultClass fault;
};

// Every constructor, in both forms, with the code and class it must give.
const Row kRows[] = {
    {ipclock::ConfigurationError, ipclock::ConfigurationError,
     absl::StatusCode::kInvalidArgument, FaultClass::kConfiguration},
    {ipclock::RangeError, ipclock::RangeError, absl::StatusCode::kOutOfRange,
     FaultClass::kConfiguration},
    {ipclock::RefusedError, ipclock::RefusedError, absl::StatusCode::kPermissionDenied,
     FaultClass::kRefused},
    {ipclock::NotBuiltError, ipclock::NotBuiltError, absl::StatusCode::kUnimplemented,
     FaultClass::kNotBuilt},
    {ipclock::TransientError, ipclock::TransientError, absl::StatusCode::kUnavailable,
     FaultClass::kTransient},
    {ipclock::LostError, ipclock::LostError, absl::StatusCode::kAborted, FaultClass::kLost},
    {ipclock::MisuseError, ipclock::MisuseError, absl::StatusCode::kFailedPrecondition,
     FaultClass::kMisuse},
    {ipclock::MissingError, ipclock::MissingError, absl::StatusCode::kNotFound,
     FaultClass::kOther},
    {ipclock::ExistsError, ipclock::ExistsError, absl::StatusCode::kAlreadyExists,
     FaultClass::kOther},
    {ipclock::OutOfResourcesError, ipclock::OutOfResourcesError,
     absl::StatusCode::kResourceExhausted, FaultClass::kOther},
    {ipclock::CorruptionError, ipclock::CorruptionError, absl::StatusCode::kDataLoss,
     FaultClass::kOther},
    {ipclock::UnexpectedError, ipclock::UnexpectedError, absl::StatusCode::kInternal,
     FaultClass::kOther},
    {ipclock::StayedBusyError, ipclock::StayedBusyError, absl::StatusCode::kDeadlineExceeded,
     FaultClass::kOther},
};

void EachConstructorGivesItsCode(void**) {
  for (const Row& row : kRows) {
    const absl::Status named = row.make("flock:///tmp/x", "r", "what went wrong");
    ASSERT_CODE(named, row.code);
    assert_string_equal(std::string(named.message()).c_str(),
                        "flock:///tmp/x: resource \"r\": what went wrong");
    const absl::Status alone = row.alone("what went wrong");
    ASSERT_CODE(alone, row.code);
    assert_string_equal(std::string(alone.message()).c_str(), "what went wrong");
    assert_true(ipclock::ClassOf(row.make) == row.fault);
    assert_true(ipclock::FaultClassOf(named) == row.fault);
    ASSERT_CODE(ipclock::ErrorOf(row.make, "m"), row.code);
  }
  // Without a resource the message names the store alone.
  assert_string_equal(
      std::string(ipclock::LostError("shm://", "", "gone").message()).c_str(), "shm://: gone");
}

void RestatedKeepsTheCode(void**) {
  const absl::Status first = ipclock::OutOfResourcesError("disk full");
  const absl::Status again = ipclock::Restated(first, "write: disk full");
  ASSERT_CODE(again, absl::StatusCode::kResourceExhausted);
  assert_string_equal(std::string(again.message()).c_str(), "write: disk full");
  const absl::Status named = ipclock::Restated(first, "redis://h", "", "write: disk full");
  ASSERT_CODE(named, absl::StatusCode::kResourceExhausted);
  assert_string_equal(std::string(named.message()).c_str(), "redis://h: write: disk full");
}

void ErrnoFollowsErrnoToCode(void**) {
  ASSERT_CODE(ipclock::FaultOfErrno(EACCES)("s", "", "m"), absl::StatusCode::kPermissionDenied);
  ASSERT_CODE(ipclock::FaultOfErrno(ENOENT)("s", "", "m"), absl::StatusCode::kNotFound);
  ASSERT_CODE(ipclock::FaultOfErrno(EEXIST)("s", "", "m"), absl::StatusCode::kAlreadyExists);
  ASSERT_CODE(ipclock::FaultOfErrno(ENOSPC)("s", "", "m"), absl::StatusCode::kResourceExhausted);
  ASSERT_CODE(ipclock::FaultOfErrno(ETIMEDOUT)("s", "", "m"),
              absl::StatusCode::kDeadlineExceeded);
  ASSERT_CODE(ipclock::FaultOfErrno(ECONNREFUSED)("s", "", "m"), absl::StatusCode::kUnavailable);
  ASSERT_CODE(ipclock::FaultOfErrno(EISDIR)("s", "", "m"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::FaultOfErrno(ENOSYS)("s", "", "m"), absl::StatusCode::kUnimplemented);
  ASSERT_CODE(ipclock::FaultOfErrno(EDEADLK)("s", "", "m"), absl::StatusCode::kFailedPrecondition);
  ASSERT_CODE(ipclock::FaultOfErrno(EIO)("s", "", "m"), absl::StatusCode::kInternal);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(EachConstructorGivesItsCode),
      cmocka_unit_test(RestatedKeepsTheCode),
      cmocka_unit_test(ErrnoFollowsErrnoToCode),
  };
  return cmocka_run_group_tests_name("store_errors", tests, nullptr, nullptr);
}
