// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "machine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ipclock_bench {

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return absl::StrCat(a, " ", b, " ", c);
}

std::string DescribeMachine() {
  std::string cpu = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (absl::StartsWith(line, "model name")) {
      std::pair<std::string, std::string> kv = absl::StrSplit(line, ':');
      cpu = std::string(absl::StripAsciiWhitespace(kv.second));
      break;
    }
  }
  utsname u;
  uname(&u);
  return absl::StrCat(cpu, ", ", sysconf(_SC_NPROCESSORS_ONLN), " CPUs, Linux ",
                      u.release, ", load average at the start ", LoadAverage());
}

}  // namespace ipclock_bench
