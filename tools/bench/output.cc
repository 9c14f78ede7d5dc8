// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "output.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace ipclock_bench {

namespace {

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

// One line per handoff subject: name, p50, p99 (µs), from the handoff rows.
std::string HandoffData(const Report& report) {
  std::string data = "# subject p50_us p99_us\n";
  for (const Row& r : report.rows) {
    absl::string_view figure = r.figure;
    if (r.section != "handoff" || !absl::ConsumeSuffix(&figure, " p50")) continue;
    absl::ConsumePrefix(&figure, "ipclock ");
    double p99 = report.Value("handoff", absl::StrCat(r.figure.substr(0, r.figure.size() - 4), " p99"));
    if (r.value < 0 || p99 < 0) continue;
    absl::StrAppend(&data, "\"", figure, "\" ", absl::StrFormat("%.2f %.2f", r.value, p99), "\n");
  }
  return data;
}

constexpr char kPlot[] = R"gp(set terminal pngcairo size 900,480 font ",11"
set output "%s/handoff.png"
set title "Release in one process to acquire in another (%s)"
set ylabel "µs (log scale)"
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set grid ytics
set xtics rotate by -20
plot "%s/handoff.dat" using 2:xtic(1) title "p50", "" using 3 title "p99"
)gp";

}  // namespace

bool WriteOutputs(const Report& report, const std::string& dir) {
  const std::string md = report.Markdown();
  std::fputs(md.c_str(), stdout);
  bool ok = WriteFile(absl::StrCat(dir, "/bench.md"), md) &&
            WriteFile(absl::StrCat(dir, "/bench.json"), report.Json());
  const std::string data = HandoffData(report);
  // No plot without the handoff rows (bench --only without handoff).
  if (!ok || data.find('\n') + 1 == data.size()) return ok;
  ok = WriteFile(absl::StrCat(dir, "/handoff.dat"), data);
  const std::string script = absl::StrFormat(kPlot, dir, report.machine.substr(0, report.machine.find(',')), dir);
  if (ok && WriteFile(absl::StrCat(dir, "/handoff.gp"), script)) {
    std::string command = absl::StrCat("gnuplot '", dir, "/handoff.gp' 2>&1");
    if (std::system(command.c_str()) != 0) {
      std::fprintf(stderr, "bench: gnuplot failed or is missing; no handoff.png\n");
    }
  }
  return ok;
}

}  // namespace ipclock_bench
