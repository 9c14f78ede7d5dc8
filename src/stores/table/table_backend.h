// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the table store (table_store.h) needs of a database: one statement
// at a time on a connection of the backend's own, with the failures the
// store acts on told apart. One backend per database: table_postgres.cc,
// table_mysql.cc, table_sqlite.cc.

#ifndef IPCLOCK_STORES_TABLE_BACKEND_H_
#define IPCLOCK_STORES_TABLE_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/store_errors.h"
#include "platform/scoped_fd.h"

namespace ipclock {

// Which of Symfony's per-driver SQL applies (PDO's driver names).
enum class TableDialect { kPgsql, kMysql, kSqlite };

struct TableReply {
  enum class Failure {
    kNone,
    kNoTable,       // the table does not exist
    kDuplicateKey,  // an INSERT met an existing primary key
    kRetry,         // the database rolled the statement back to break a
                    // deadlock or a serialization conflict: run it again
    kOther,         // any other failure: `fault` and `error` say what
  };
  Failure failure = Failure::kNone;
  // The error of a kOther failure (Unexpected where the backend gave none).
  StoreErrorMaker fault = UnexpectedError;
  std::string error;  // the database's message, for kOther and kNoTable
  // Rows matched by an UPDATE or DELETE.
  uint64_t affected = 0;
  // A SELECT's rows; NULL as "".
  std::vector<std::vector<std::string>> rows;
};

class TableBackend {
 public:
  virtual ~TableBackend() = default;
  virtual TableDialect dialect() const = 0;
  // Opens a connection, kept in the pool, to see that the database can be
  // reached before the store is made: Unavailable when it cannot, a
  // configuration fault when it refuses.
  virtual absl::Status Check() = 0;
  // Runs `sql`, one statement with no parameters, on a connection of the
  // backend's pool; callable from many threads at once. Unavailable when
  // the database cannot be reached or did not answer in time (the
  // connection is then dropped); otherwise the reply, which may carry a
  // failure.
  virtual absl::StatusOr<TableReply> Run(const std::string& sql) = 0;
  // A descriptor of the file that holds the table, for the watch on held
  // locks (WatchTargets::inode_fds), owned by the caller; invalid for a
  // database behind a server.
  virtual ScopedFd OpenWatchFd() { return ScopedFd(); }
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_TABLE_BACKEND_H_
