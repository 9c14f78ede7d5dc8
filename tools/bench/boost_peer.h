// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Boost.Interprocess peer rows. This is the competitor, not ipclock:
// boost_peer.cc is the one file of the benchmark built with exceptions,
// since Boost reports errors by throwing. Nothing here throws across this
// interface: each function returns the median ns per operation, or < 0 if
// Boost failed. Without Boost headers the benchmark is built without them.

#ifndef IPCLOCK_TOOLS_BENCH_BOOST_PEER_H_
#define IPCLOCK_TOOLS_BENCH_BOOST_PEER_H_

#include <string>

#include "measure.h"

namespace ipclock_bench {

// named_mutex: constructed (open_or_create an existing one), locked,
// unlocked and destroyed per operation; and kept, locked and unlocked.
double BoostNamedMutexCycle(const RunShape& shape);
double BoostNamedMutexPair(const RunShape& shape);
// file_lock (fcntl record locks, not flock) on a file in `dir`.
double BoostFileLockCycle(const RunShape& shape, const std::string& dir);
double BoostFileLockPair(const RunShape& shape, const std::string& dir);
// named_semaphore with one permit.
double BoostNamedSemaphoreCycle(const RunShape& shape);
double BoostNamedSemaphorePair(const RunShape& shape);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_BOOST_PEER_H_
