// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Runs symfony_peer.php (Symfony Lock under PHP) and reads its figures.

#ifndef IPCLOCK_TOOLS_BENCH_SYMFONY_PEER_H_
#define IPCLOCK_TOOLS_BENCH_SYMFONY_PEER_H_

#include <map>
#include <string>
#include <vector>

#include "measure.h"

namespace ipclock_bench {

struct SymfonyFigures {
  std::map<std::string, double> ns;  // "flock_cycle_ns" -> value
  std::vector<std::string> notes;
};

// Empty figures and a note when php or the script is missing.
SymfonyFigures RunSymfonyPeer(const std::string& script, const std::string& dir,
                              const RunShape& shape);
// The first call's figures, for every section that needs them: the script
// times every Symfony store in one run.
const SymfonyFigures& SymfonyPeerOnce(const std::string& dir, const RunShape& shape);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_SYMFONY_PEER_H_
