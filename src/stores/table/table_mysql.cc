// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table store on MySQL/MariaDB: Connector/C connections
// (stores/connections/mysql_conn.h) in a pool, Symfony's mysql SQL, and the `mysql://`,
// `mysql2://` and PDO `mysql:` DSNs.

#include <mysqld_error.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/options_driver.h"
#include "core/store_errors.h"
#include "stores/connections/connection_pool.h"
#include "stores/connections/mysql_conn.h"
#include "stores/connections/mysql_dsn.h"
#include "stores/table/table_store.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "mysql";

class MyTableBackend final : public TableBackend {
 public:
  MyTableBackend(MysqlConnectionOptions connection, size_t max_idle, std::string describe)
      : connection_(std::move(connection)), describe_(std::move(describe)), pool_(max_idle) {}

  TableDialect dialect() const override { return TableDialect::kMysql; }

  absl::Status Check() override {
    absl::StatusOr<MyConnection> conn = MyConnect(connection_, {}, describe_);
    if (!conn.ok()) return conn.status();
    pool_.Put(*std::move(conn));
    return absl::OkStatus();
  }

  absl::StatusOr<TableReply> Run(const std::string& sql) override {
    // A pooled session that the server ended while idle has sent its
    // goodbye: the pool drops it (MyConnection::looks_alive), so no
    // statement is ever sent twice.
    absl::StatusOr<MyConnection> taken =
        pool_.TakeOrConnect([this] { return MyConnect(connection_, {}, describe_); });
    if (!taken.ok()) return taken.status();
    MyConnection conn = *std::move(taken);
    absl::StatusOr<MyResult> r =
        MyQuery(conn, sql, Deadline::In(absl::Seconds(kMyIoTimeoutSeconds)));
    if (!r.ok()) return TransientError(r.status().message());
    TableReply out;
    if (r->failed()) {
      out.error = r->ErrorText();
      if (r->error == ER_NO_SUCH_TABLE) {
        out.failure = TableReply::Failure::kNoTable;
      } else if (r->error == ER_DUP_ENTRY) {
        out.failure = TableReply::Failure::kDuplicateKey;
      } else if (r->error == ER_LOCK_DEADLOCK) {
        // InnoDB: two INSERTs of one key waiting on each other's duplicate
        // check, with a DELETE in between, deadlock; one is rolled back.
        out.failure = TableReply::Failure::kRetry;
      } else {
        out.failure = TableReply::Failure::kOther;
        out.fault = MyFaultOf(r->error);
      }
    } else {
      out.affected = r->affected_rows;
      for (std::vector<std::optional<std::string>>& row : r->rows) {
        std::vector<std::string> values;
        for (std::optional<std::string>& v : row) values.push_back(v.value_or(""));
        out.rows.push_back(std::move(values));
      }
    }
    pool_.Put(std::move(conn));
    return out;
  }

 private:
  const MysqlConnectionOptions connection_;
  const std::string describe_;
  ConnectionPool<MyConnection> pool_;
};

std::string Describe(const MysqlTableStoreOptions& options) {
  return DescribeMysql(kName, options.connection);
}

absl::StatusOr<MysqlTableStoreOptions> OptionsFromDsn(Dsn& dsn) {
  MysqlTableStoreOptions options;
  absl::StatusOr<MysqlConnectionOptions> connection = MysqlConnectionFromDsn(dsn);
  if (!connection.ok()) return connection.status();
  if (absl::Status s = TakeTableDsnTail(dsn, &options.max_idle, &options.table); !s.ok()) {
    return s;
  }
  options.connection = *std::move(connection);
  return options;
}

absl::StatusOr<std::unique_ptr<MyTableBackend>> BackendFromDsn(
    Dsn& dsn, MysqlTableStoreOptions* options) {
  absl::StatusOr<MysqlTableStoreOptions> read = OptionsFromDsn(dsn);
  if (!read.ok()) return read.status();
  *options = *std::move(read);
  return std::make_unique<MyTableBackend>(options->connection, options->max_idle,
                                          Describe(*options));
}

Capabilities MysqlTableCapabilities() { return TableCapabilities(kMysqlTableEntry.scope); }

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewMysqlTableStore(
    const MysqlTableStoreOptions& options) {
  if (absl::Status s = MariadbLibrary().Load(kMysqlTableEntry.name); !s.ok()) return s;
  const std::string describe = DescribeMysql(kName, options.connection);
  if (absl::Status s = CheckMysqlConnection(options.connection, describe); !s.ok()) return s;
  auto backend = std::make_unique<MyTableBackend>(options.connection, options.max_idle,
                                                  describe);
  return MakeTableStore(kName, describe, kMysqlTableEntry.scope, options.table, std::move(backend));
}

const StoreDriver kMysqlTableDriver = {
    &PrepareFromOptions<&OptionsFromDsn, nullptr, &MysqlTableCapabilities,
                        &NewMysqlTableStore>,
    &ListTableLocksFromDsn<MysqlTableStoreOptions, &BackendFromDsn, &Describe>, &MariadbLibrary};

}  // namespace ipclock
