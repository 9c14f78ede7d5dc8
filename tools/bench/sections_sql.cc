// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The SQL stores against one `SELECT 1` on one connection of the same
// database: MySQL named locks, and Symfony's table store on PostgreSQL,
// MariaDB and SQLite. A GET_LOCK and a RELEASE_LOCK are two round trips; a
// table lock is an INSERT and a DELETE, two round trips that write, so the
// table stores are also measured against those two statements run by hand.

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "ipclock_rows.h"
#include "remote_peers.h"
#include "sections.h"
#include "sql_peers.h"

namespace ipclock_bench {

namespace {

constexpr char kRaw[] = "the same INSERT+DELETE without ipclock";

// Reused-handle acquire+release of `dsn` as a row of `section`, against
// `floor`; or a note saying why not.
void StoreRow(const RunShape& shape, const std::string& section, const std::string& dsn,
              const std::string& resource, const char* floor, double limit,
              Report* report, const std::string& figure = "ipclock acquire+release") {
  Row* row = ReusedHandleRow(shape, section, dsn, figure, resource, report);
  if (row == nullptr) return;
  Against(*row, *report, floor, limit > 0 ? GoalKind::kRatioAtMost : GoalKind::kNone, limit);
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

void SqlSections(const Settings& s, const Workspace& ws, Report* report) {
  const RunShape shape = Scaled(s.shape, 50);
  if (const char* pg = Env("IPCLOCK_TEST_POSTGRES_TABLE")) {
    std::fprintf(stderr, "bench: postgresql table\n");
    const char* kSelect = "libpq SELECT 1 round trip";
    std::string why;
    report->Add("postgresql table", kSelect, PostgresSelect1(shape, pg, &why), kNs, why);
    report->Add("postgresql table", kRaw, RawInsertDelete(shape, "pgsql", pg, &why), kNs, why);
    StoreRow(shape, "postgresql table", pg, ws.tag + ".pgtable", kSelect, 4.0, report);
    StoreRow(shape, "postgresql table", pg, ws.tag + ".pgtable2", kRaw, 1.3, report,
             "ipclock acquire+release (against the raw statements)");
  } else {
    report->notes.push_back("postgresql table rows skipped: IPCLOCK_TEST_POSTGRES_TABLE is unset");
  }
  const char* my = Env("IPCLOCK_TEST_MYSQL");
  const char* my_table = Env("IPCLOCK_TEST_MYSQL_TABLE");
  if (my != nullptr && my_table != nullptr) {
    const char* kSelect = "Connector/C SELECT 1 round trip";
    std::string why;
    std::fprintf(stderr, "bench: mysql+advisory\n");
    report->Add("mysql+advisory", kSelect, MysqlSelect1(shape, my, &why), kNs, why);
    StoreRow(shape, "mysql+advisory", my, ws.tag + ".myadv", kSelect, 2.5, report);
    std::fprintf(stderr, "bench: mysql table\n");
    report->Add("mysql table", kSelect, MysqlSelect1(shape, my_table, &why), kNs, why);
    report->Add("mysql table", kRaw, RawInsertDelete(shape, "mysql", my_table, &why), kNs, why);
    StoreRow(shape, "mysql table", my_table, ws.tag + ".mytable", kSelect, 5.0, report);
    StoreRow(shape, "mysql table", my_table, ws.tag + ".mytable2", kRaw, 1.3, report,
             "ipclock acquire+release (against the raw statements)");
  } else {
    report->notes.push_back("mysql rows skipped: IPCLOCK_TEST_MYSQL(_TABLE) is unset");
  }
  std::fprintf(stderr, "bench: sqlite table\n");
  const std::string path = ws.dir + "/bench.sqlite";
  const char* kSelect = "libsqlite3 SELECT 1 (in-process)";
  std::string why;
  report->Add("sqlite table", kSelect, SqliteSelect1(shape, path, &why), kNs, why);
  report->Add("sqlite table", kRaw, RawInsertDelete(shape, "sqlite", path, &why), kNs, why);
  StoreRow(shape, "sqlite table", absl::StrCat("sqlite://", path), ws.tag + ".lite", kRaw,
           1.5, report);
}

}  // namespace ipclock_bench
