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

// A table store's four rows, in this order: the database's SELECT 1
// (`select_ns`, noted with `*why`), the same INSERT+DELETE without
// ipclock, and ipclock's acquire+release against each (at most
// `select_limit` and 1.3 times).
void TableStoreRows(const RunShape& shape, const std::string& section, const char* kind,
                    const std::string& dsn, const std::string& resource, const char* select,
                    double select_ns, double select_limit, std::string* why, Report* report) {
  report->Add(section, select, select_ns, kNs, *why);
  report->Add(section, kRaw, RawInsertDelete(shape, kind, dsn, why), kNs, *why);
  StoreRow(shape, section, dsn, resource, select, select_limit, report);
  StoreRow(shape, section, dsn, resource + "2", kRaw, 1.3, report,
           "ipclock acquire+release (against the raw statements)");
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
    const double select_ns = PostgresSelect1(shape, pg, &why);
    TableStoreRows(shape, "postgresql table", "pgsql", pg, ws.tag + ".pgtable", kSelect,
                   select_ns, 4.0, &why, report);
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
    const double select_ns = MysqlSelect1(shape, my_table, &why);
    TableStoreRows(shape, "mysql table", "mysql", my_table, ws.tag + ".mytable", kSelect,
                   select_ns, 5.0, &why, report);
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
