// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "symfony_peer.h"

#include <stdio.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ipclock_bench {

SymfonyFigures RunSymfonyPeer(const std::string& script, const std::string& dir,
                              const RunShape& shape) {
  SymfonyFigures out;
  if (access(script.c_str(), R_OK) != 0) {
    out.notes.push_back(absl::StrCat("Symfony rows skipped: no ", script));
    return out;
  }
  // PHP is about 20x slower per operation: fewer operations, same wall time.
  std::string command = absl::StrCat(
      "php ", script, " --dir '", dir, "' --iterations ",
      std::max<int64_t>(shape.operations / 20, 200), " --reps ",
      shape.repetitions, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    out.notes.push_back("Symfony rows skipped: cannot run php");
    return out;
  }
  char line[1024];
  while (fgets(line, sizeof(line), pipe) != nullptr) {
    absl::string_view text = absl::StripTrailingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&text, "note ")) {
      out.notes.push_back(std::string(text));
      continue;
    }
    std::pair<std::string, std::string> kv = absl::StrSplit(text, ' ');
    double v;
    if (absl::SimpleAtod(kv.second, &v)) {
      out.ns[kv.first] = v;
    } else if (!text.empty()) {
      out.notes.push_back(absl::StrCat("symfony_peer.php: ", text));
    }
  }
  if (pclose(pipe) != 0 && out.ns.empty()) {
    out.notes.push_back("Symfony rows skipped: php is missing or failed");
  }
  return out;
}

const SymfonyFigures& SymfonyPeerOnce(const std::string& dir, const RunShape& shape) {
  static const SymfonyFigures* figures =
      new SymfonyFigures(RunSymfonyPeer(BENCH_SYMFONY_PEER, dir, shape));
  return *figures;
}

}  // namespace ipclock_bench
