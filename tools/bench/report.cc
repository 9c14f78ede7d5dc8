// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace ipclock_bench {

namespace {

std::string Number(double v) {
  if (v < 0) return "n/a";
  if (v >= 100) return absl::StrFormat("%.0f", v);
  if (v >= 10) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.2f", v);
}

std::string JsonNumber(double v) { return v < 0 ? "null" : absl::StrFormat("%.3f", v); }

// JSON wants UTF-8 as it is (the units and goals contain µ, ≤ and ×) and
// only quotes, backslashes and control characters escaped.
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace

double Row::Ratio() const {
  if (value <= 0 || floor <= 0) return -1;
  return value / floor;
}

std::string Row::GoalText() const {
  switch (goal) {
    case GoalKind::kNone:
      return "";
    case GoalKind::kRatioAtMost:
      return absl::StrCat("≤ ", Number(limit), "× ", floor_figure);
    case GoalKind::kValueAtMost:
      return absl::StrCat("≤ ", Number(limit), " ", unit);
    case GoalKind::kFasterAtLeast:
      return absl::StrCat("≥ ", Number(limit), "× faster than ", floor_figure);
  }
  return "";
}

std::string Row::Status() const {
  if (goal == GoalKind::kNone || value < 0) return "";
  if (goal == GoalKind::kValueAtMost) return value <= limit ? "met" : "missed";
  double r = Ratio();
  if (r < 0) return "";
  if (goal == GoalKind::kRatioAtMost) return r <= limit ? "met" : "missed";
  return 1.0 / r >= limit ? "met" : "missed";
}

Row& Report::Add(const std::string& section, const std::string& figure,
                 double value, const std::string& unit) {
  Row row;
  row.section = section;
  row.figure = figure;
  row.value = value;
  row.unit = unit;
  rows.push_back(row);
  return rows.back();
}

Row& Report::Add(const std::string& section, const std::string& figure, double value,
                 const std::string& unit, const std::string& note) {
  Row& row = Add(section, figure, value, unit);
  row.note = note;
  return row;
}

const char* Report::Server(const char* variable, const char* section) {
  const char* dsn = std::getenv(variable);
  if (dsn == nullptr || *dsn == '\0') {
    notes.push_back(absl::StrCat(section, " rows skipped: ", variable, " is unset"));
    return nullptr;
  }
  std::fprintf(stderr, "bench: %s\n", section);
  return dsn;
}

double Report::Value(const std::string& section, const std::string& figure) const {
  for (const Row& r : rows) {
    if (r.section == section && r.figure == figure) return r.value;
  }
  return -1;
}

namespace {

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

}  // namespace

void Report::AddMedianOf(const std::vector<Report>& rounds) {
  if (rounds.empty()) return;
  const Report& first = rounds.front();
  for (const std::string& n : first.notes) notes.push_back(n);
  for (size_t i = 0; i < first.rows.size(); ++i) {
    Row row = first.rows[i];
    std::vector<double> values, floors;
    for (const Report& r : rounds) {
      if (r.rows.size() != first.rows.size() || r.rows[i].figure != row.figure) {
        values = {row.value};
        floors = {row.floor};
        break;
      }
      values.push_back(r.rows[i].value);
      floors.push_back(r.rows[i].floor);
    }
    row.value = MedianOf(values);
    row.floor = MedianOf(floors);
    rows.push_back(row);
  }
}

namespace {

std::string TableRow(const Row& r) {
  std::string ratio;
  if (r.Ratio() >= 0) {
    ratio = r.goal == GoalKind::kFasterAtLeast
                ? absl::StrCat(Number(1.0 / r.Ratio()), "× faster")
                : absl::StrCat(Number(r.Ratio()), "×");
  }
  std::string figure = r.figure;
  if (!r.note.empty()) absl::StrAppend(&figure, " (", r.note, ")");
  // A '|' in a cell would end it.
  figure = absl::StrReplaceAll(figure, {{"|", "\\|"}});
  const std::string goal = absl::StrReplaceAll(r.GoalText(), {{"|", "\\|"}});
  return absl::StrCat("| ", r.section, " | ", figure, " | ", Number(r.value),
                      " | ", r.unit, " | ", ratio, " | ", goal, " | ",
                      r.Status(), " |\n");
}

constexpr char kTableHead[] =
    "| store | figure | value | unit | ratio to floor | goal | status |\n"
    "|---|---|---:|---|---:|---|---|\n";

}  // namespace

std::string Report::Markdown() const {
  std::string out = absl::StrCat("Machine: ", machine, "\n\n");
  // The summary: each figure held to a goal, the floors they are held to,
  // and the memory figures; doc/performance.md's "Goals" table is this one.
  std::set<std::pair<std::string, std::string>> floors;
  for (const Row& r : rows) {
    if (r.goal != GoalKind::kNone) floors.insert({r.section, r.floor_figure});
  }
  absl::StrAppend(&out, "### Goals\n\n", kTableHead);
  std::set<std::string> shown;
  for (const Row& r : rows) {
    const bool wanted = r.goal != GoalKind::kNone || r.section == "memory" ||
                        floors.count({r.section, r.figure}) > 0;
    std::string line = TableRow(r);
    if (wanted && shown.insert(line).second) absl::StrAppend(&out, line);
  }
  absl::StrAppend(&out, "\n### All figures\n\n", kTableHead);
  for (const Row& r : rows) absl::StrAppend(&out, TableRow(r));
  if (!notes.empty()) {
    absl::StrAppend(&out, "\n");
    for (const std::string& n : notes) absl::StrAppend(&out, "- ", n, "\n");
  }
  return out;
}

std::string Report::Json() const {
  std::vector<std::string> items;
  for (const Row& r : rows) {
    items.push_back(absl::StrCat(
        "    {\"store\": ", JsonString(r.section), ", \"figure\": ",
        JsonString(r.figure), ", \"value\": ", JsonNumber(r.value),
        ", \"unit\": ", JsonString(r.unit), ", \"floor\": ",
        JsonString(r.floor_figure), ", \"ratio\": ", JsonNumber(r.Ratio()),
        ", \"goal\": ", JsonString(r.GoalText()), ", \"status\": ",
        JsonString(r.Status()), ", \"note\": ", JsonString(r.note), "}"));
  }
  std::vector<std::string> quoted;
  for (const std::string& n : notes) quoted.push_back(JsonString(n));
  return absl::StrCat("{\n  \"machine\": ", JsonString(machine),
                      ",\n  \"rows\": [\n", absl::StrJoin(items, ",\n"),
                      "\n  ],\n  \"notes\": [", absl::StrJoin(quoted, ", "),
                      "]\n}\n");
}

}  // namespace ipclock_bench
