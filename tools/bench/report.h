// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The benchmark's results: rows of figures, each with the floor it is
// compared to and the goal it is held to, written as Markdown and JSON.

#ifndef IPCLOCK_TOOLS_BENCH_REPORT_H_
#define IPCLOCK_TOOLS_BENCH_REPORT_H_

#include <deque>
#include <string>
#include <vector>

namespace ipclock_bench {

enum class GoalKind {
  kNone,
  kRatioAtMost,    // value / floor <= limit
  kValueAtMost,    // value <= limit (in the row's unit)
  kFasterAtLeast,  // floor / value >= limit (the floor is a slower peer)
};

struct Row {
  std::string section;  // "shm", "flock", ...
  std::string figure;   // what was measured
  double value = -1;    // < 0: not measured
  std::string unit;     // "ns/op", "µs", ...
  std::string floor_figure;  // the row it is compared to; empty for none
  double floor = -1;
  GoalKind goal = GoalKind::kNone;
  double limit = 0;
  std::string note;

  double Ratio() const;  // value / floor, or < 0
  std::string GoalText() const;
  // "met", "missed", or "" (no goal, or a figure is missing).
  std::string Status() const;
};

struct Report {
  std::string machine;  // CPU, kernel, load average
  // A deque, so that a row reference stays valid while rows are added.
  std::deque<Row> rows;
  std::vector<std::string> notes;

  // Returns the row added, for filling in its floor and goal.
  Row& Add(const std::string& section, const std::string& figure, double value,
           const std::string& unit);
  // The same, with `note`: why the figure has no value. Arguments are
  // computed before the call, so `Add(..., Measure(&why), unit, why)`
  // notes what that measure said.
  Row& Add(const std::string& section, const std::string& figure, double value,
           const std::string& unit, const std::string& note);
  // The value of the first row named `figure` in `section`, or -1.
  double Value(const std::string& section, const std::string& figure) const;
  // $`variable`, the DSN of a test server, saying on stderr that `section`'s
  // rows start; nullptr, with a note that they were skipped, when it is
  // unset or empty.
  const char* Server(const char* variable, const char* section);

  // Appends `rounds`' rows, each the median over the rounds of the same row
  // (value and floor), and their notes once. The rounds must have run the
  // same sections; if their rows differ, the first round is taken as it is.
  void AddMedianOf(const std::vector<Report>& rounds);

  std::string Markdown() const;
  std::string Json() const;
};

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_REPORT_H_
