// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ipclock's own figures on one store: the uncontended costs a program pays.

#ifndef IPCLOCK_TOOLS_BENCH_IPCLOCK_ROWS_H_
#define IPCLOCK_TOOLS_BENCH_IPCLOCK_ROWS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ipclock/store.h"
#include "measure.h"
#include "report.h"

namespace ipclock_bench {

// StoreFromDsn without the RemoveIPC warning, which would only be noise in
// the output.
absl::StatusOr<std::shared_ptr<ipclock::Store>> OpenStore(const std::string& dsn);

// `dsn` with `option` ("name=value") added to its query.
std::string WithOption(const std::string& dsn, const std::string& option);

// TryAcquire(mode) + Release of one Lock kept across operations.
double ReusedHandle(const RunShape& shape, const std::shared_ptr<ipclock::Store>& store,
                    const std::string& resource,
                    ipclock::LockMode mode = ipclock::LockMode::kExclusive);
// ReusedHandle on the store of `dsn` as the row `figure` of `section`
// (ns/op); nullptr, with a note saying why, if the store does not open.
Row* ReusedHandleRow(const RunShape& shape, const std::string& section, const std::string& dsn,
                     const std::string& figure, const std::string& resource, Report* report);
// Lock::Create + TryAcquire + Release + destruction per operation, on a
// resource that exists already (the warm-up creates it).
double FullCycle(const RunShape& shape, const std::shared_ptr<ipclock::Store>& store,
                 const std::string& resource);

// Microseconds from unlinking a shm segment to the report of the lost lock
// by a LockWatch (inotify; its interval is an hour), the median of
// `samples` segments named `prefix`.N.
double ShmRemovalNoticedMicros(const std::string& prefix, int samples);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_IPCLOCK_ROWS_H_
