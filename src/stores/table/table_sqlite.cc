// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table store on SQLite: one database file of this host, connections in
// a pool, Symfony's sqlite SQL, and the `sqlite:///PATH`, `sqlite3:///PATH`
// and PDO `sqlite:/PATH` DSNs. The caveats of a file database are in
// include/ipclock/stores/table_store.h; the ones of each call are beside it.

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/named_file.h"
#include "core/options_driver.h"
#include "core/store_errors.h"
#include "ipclock/errors.h"
#include "platform/errors.h"
#include "platform/file_identity.h"
#include "platform/sqlite_calls.h"
#include "stores/connections/connection_pool.h"
#include "stores/table/table_store.h"
#include "platform/process_id.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "sqlite";

// One connection. SQLite forbids using a connection in a child of the
// process that opened it, closing included (the close may checkpoint and
// delete the WAL under the parent): a copy inherited through fork() is
// left open, and its descriptors go at exec (O_CLOEXEC) or exit.
//
// A connection also remembers which file it opened: a database file deleted
// or replaced (rm, a restore, a deploy) goes on working for the connections
// that have it open, so their rows, held locks included, are in a file that
// no newcomer sees. Such a connection is dropped before its next statement.
class SqliteConn {
 public:
  SqliteConn() = default;
  SqliteConn(sqlite3* db, FileIdentity file) : db_(db), pid_(CurrentPid()), file_(file) {}
  SqliteConn(SqliteConn&& o) noexcept
      : db_(std::exchange(o.db_, nullptr)), pid_(o.pid_), file_(o.file_) {}
  SqliteConn& operator=(SqliteConn&& o) noexcept {
    if (this != &o) {
      Close();
      db_ = std::exchange(o.db_, nullptr);
      pid_ = o.pid_;
      file_ = o.file_;
    }
    return *this;
  }
  ~SqliteConn() { Close(); }

  sqlite3* get() const { return db_; }
  const FileIdentity& file() const { return file_; }
  bool ours() const { return db_ != nullptr && pid_ == CurrentPid(); }
  bool looks_alive() const { return ours(); }

 private:
  void Close() {
    if (db_ != nullptr && pid_ == CurrentPid()) Sqlite().sqlite3_close_v2(db_);
    db_ = nullptr;
  }
  sqlite3* db_ = nullptr;
  pid_t pid_ = 0;
  FileIdentity file_;
};

// The store's one classification of SQLite's result codes (ipclock/errors.h).
StoreErrorMaker FaultOf(int rc, int sys_errno) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return TransientError;  // another process writes
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return RefusedError;
    case SQLITE_NOTADB:
      return ConfigurationError;  // a file that is not a database
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return OutOfResourcesError;
    case SQLITE_CORRUPT:
      return CorruptionError;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
      // By the OS error; an I/O error with none is no server to wait for.
      if (sys_errno != 0) return FaultOfErrno(sys_errno);
      return UnexpectedError;
    default:
      return UnexpectedError;
  }
}

// SQLite's unix VFS takes paths of at most this many bytes.
constexpr size_t kMaxSqlitePath = 512;

// The database's path, checked before SQLite opens it: absolute, short
// enough for SQLite, in a dir that exists, and a regular file, as are the
// journal, WAL and shared-memory files beside it if there (a FIFO would
// block SQLite's open, a device or a /proc file would be written to).
absl::Status CheckSqlitePath(const std::string& path, absl::string_view where) {
  if (!absl::StartsWith(path, "/")) {
    return ConfigurationError(absl::StrCat(
        "ipclock: ", where, ": the database must be an absolute path, not \"", path, "\""));
  }
  if (path.size() > kMaxSqlitePath) {
    return ConfigurationError(absl::StrCat("ipclock: ", where, ": the database path is ",
                                           path.size(), " bytes, more than the ",
                                           kMaxSqlitePath, " SQLite takes"));
  }
  const std::string dir = path.substr(0, std::max<size_t>(path.rfind('/'), 1));
  if (absl::Status s = CheckNamedFile(where, absl::StrCat("the database's dir ", dir), dir,
                                      FileKind::kDirectory, IfMissing::kConfiguration);
      !s.ok()) {
    return s;
  }
  for (absl::string_view suffix : {"", "-journal", "-wal", "-shm"}) {
    const std::string file = absl::StrCat(path, suffix);
    if (absl::Status s = CheckNamedFile(where, absl::StrCat("the database ", file), file,
                                        FileKind::kRegularFile, IfMissing::kFine);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

std::string ErrorText(sqlite3* db, int rc) {
  std::string text =
      absl::StrCat(db != nullptr ? Sqlite().sqlite3_errmsg(db) : Sqlite().sqlite3_errstr(rc),
                   " [SQLITE ", rc, "]");
  const int sys = db != nullptr ? Sqlite().sqlite3_system_errno(db) : 0;
  if (sys != 0 && ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_IOERR)) {
    absl::StrAppend(&text, " (", ErrnoName(sys), ")");
  }
  if ((rc & 0xff) == SQLITE_BUSY) {
    absl::StrAppend(&text, ": another process kept the database locked for longer "
                           "than busy_timeout");
  }
  return text;
}

class SqliteTableBackend final : public TableBackend {
 public:
  SqliteTableBackend(std::string path, absl::Duration busy_timeout, std::string describe,
                     bool read_only = false)
      : path_(std::move(path)), busy_timeout_(busy_timeout), describe_(std::move(describe)),
        read_only_(read_only), pool_(4) {}

  TableDialect dialect() const override { return TableDialect::kSqlite; }

  absl::Status Check() override {
    absl::StatusOr<SqliteConn> conn = Open();
    if (!conn.ok()) return conn.status();
    pool_.Put(*std::move(conn));
    return absl::OkStatus();
  }

  absl::StatusOr<TableReply> Run(const std::string& sql) override {
    SqliteConn conn;
    std::optional<SqliteConn> pooled = pool_.Take();
    // One stat per statement: a pooled connection to a file that is no
    // longer the one at the path is dropped (see SqliteConn).
    const std::optional<FileIdentity> now = pooled ? IdentityOf(path_) : std::nullopt;
    if (pooled && now && pooled->file() == *now) {
      conn = *std::move(pooled);
    } else {
      absl::StatusOr<SqliteConn> fresh = Open();
      if (!fresh.ok()) return fresh.status();
      conn = *std::move(fresh);
    }
    TableReply out = Step(conn.get(), sql);
    pool_.Put(std::move(conn));
    if (out.failure == TableReply::Failure::kOther &&
        ClassOf(out.fault) == FaultClass::kTransient) {
      return TransientError(out.error);
    }
    return out;
  }

 private:
  // Opens the file (creating it), in WAL mode: readers never wait for the
  // writer, and a writer holds the write lock only for its one statement.
  // synchronous=NORMAL syncs at checkpoints, not at every commit: a power
  // cut may lose the last acquisitions, and their holders died with the
  // host. The busy timeout covers another process's write in progress.
  ScopedFd OpenWatchFd() override { return OpenForWatching(path_); }

  absl::StatusOr<SqliteConn> Open() const {
    // The file is looked at before and after it is opened: the same file
    // both times is the file SQLite opened (short of two swaps in between).
    for (int attempt = 0;; ++attempt) {
      const std::optional<FileIdentity> before = IdentityOf(path_);
      absl::StatusOr<SqliteConn> conn = OpenOnce();
      if (!conn.ok()) return conn.status();
      const std::optional<FileIdentity> after = IdentityOf(path_);
      if (after && (!before || *before == *after) && conn->file() == *after) return conn;
      if (attempt == 3) {
        return TransientError(describe_, "",
                              absl::StrCat("open ", path_, ": the file keeps being "
                                           "replaced or removed"));
      }
    }
  }

  absl::StatusOr<SqliteConn> OpenOnce() const {
    sqlite3* raw = nullptr;
    const int rc = Sqlite().sqlite3_open_v2(
        path_.c_str(), &raw,
        (read_only_ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
            SQLITE_OPEN_NOMUTEX,
        nullptr);
    if (rc != SQLITE_OK) {
      const int sys = raw != nullptr ? Sqlite().sqlite3_system_errno(raw) : 0;
      const std::string text = ErrorText(raw, rc);
      Sqlite().sqlite3_close_v2(raw);
      return FaultOf(rc, sys)(describe_, "",
                              absl::StrCat("open ", path_, ": ", text));
    }
    // The file as it is right after the open (for a file SQLite just
    // created, the only moment it can be looked at).
    const std::optional<FileIdentity> file = IdentityOf(path_);
    SqliteConn conn(raw, file.value_or(FileIdentity()));
    Sqlite().sqlite3_extended_result_codes(raw, 1);
    Sqlite().sqlite3_busy_timeout(raw, static_cast<int>(absl::ToInt64Milliseconds(busy_timeout_)));
    if (read_only_) return conn;
    for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"}) {
      TableReply r = Step(raw, pragma);
      if (r.failure != TableReply::Failure::kNone) {
        return r.fault(describe_, "", absl::StrCat(pragma, ": ", r.error));
      }
    }
    return conn;
  }

  static TableReply Step(sqlite3* db, const std::string& sql) {
    TableReply out;
    auto fail = [&](int rc) {
      out.error = ErrorText(db, rc);
      const std::string message = Sqlite().sqlite3_errmsg(db);
      if (absl::StrContains(message, "no such table")) {
        out.failure = TableReply::Failure::kNoTable;
      } else if ((rc & 0xff) == SQLITE_CONSTRAINT) {
        out.failure = TableReply::Failure::kDuplicateKey;
      } else {
        out.failure = TableReply::Failure::kOther;
        out.fault = FaultOf(rc, Sqlite().sqlite3_system_errno(db));
      }
      return out;
    };
    sqlite3_stmt* stmt = nullptr;
    int rc =
        Sqlite().sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) return fail(rc);
    while ((rc = Sqlite().sqlite3_step(stmt)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < Sqlite().sqlite3_column_count(stmt); ++i) {
        const unsigned char* text = Sqlite().sqlite3_column_text(stmt, i);
        row.emplace_back(text != nullptr ? reinterpret_cast<const char*>(text) : "");
      }
      out.rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) {
      Sqlite().sqlite3_finalize(stmt);
      return fail(rc);
    }
    Sqlite().sqlite3_finalize(stmt);
    out.affected = static_cast<uint64_t>(Sqlite().sqlite3_changes64(db));
    return out;
  }

  const std::string path_;
  const absl::Duration busy_timeout_;
  const std::string describe_;
  const bool read_only_;  // for listing, which must create nothing
  ConnectionPool<SqliteConn> pool_;
};

absl::StatusOr<SqliteTableStoreOptions> OptionsFromDsn(Dsn& dsn) {
  SqliteTableStoreOptions options;
  absl::string_view path = dsn.path();
  if (dsn.has_authority() && !dsn.host().empty()) {
    return BadDsn(dsn, "a sqlite DSN has no host: sqlite:///ABSOLUTE/PATH");
  }
  // Doctrine's absolute form, sqlite:////PATH, leaves "//PATH".
  while (absl::StartsWith(path, "//")) path.remove_prefix(1);
  if (path == ":memory:" || path == "/:memory:") {
    return BadDsn(dsn, "an in-memory SQLite database belongs to one connection and "
                       "excludes nobody: give a file, sqlite:///ABSOLUTE/PATH");
  }
  if (!absl::StartsWith(path, "/")) {
    return BadDsn(dsn, "the database must be an absolute path: sqlite:///ABSOLUTE/PATH "
                       "(a relative one would name another file in every working dir)");
  }
  options.path = std::string(path);
  absl::StatusOr<double> busy = dsn.TakeSeconds("busy_timeout", 5, 3600);
  if (!busy.ok()) return busy.status();
  options.busy_timeout = absl::Seconds(*busy);
  if (absl::Status s = TakeTableDsnTail(dsn, nullptr, &options.table); !s.ok()) return s;
  if (absl::Status s = CheckSqlitePath(options.path, absl::StrCat("bad DSN \"", dsn.redacted(), "\""));
      !s.ok()) {
    return s;
  }
  return options;
}

std::string Describe(const SqliteTableStoreOptions& options) {
  return absl::StrCat(kName, "://", options.path);
}

absl::StatusOr<std::unique_ptr<SqliteTableBackend>> BackendFromDsn(
    Dsn& dsn, SqliteTableStoreOptions* options, bool read_only) {
  absl::StatusOr<SqliteTableStoreOptions> read = OptionsFromDsn(dsn);
  if (!read.ok()) return read.status();
  *options = *std::move(read);
  return std::make_unique<SqliteTableBackend>(options->path, options->busy_timeout,
                                              Describe(*options), read_only);
}

Capabilities SqliteTableCapabilities() { return TableCapabilities(kSqliteTableEntry.scope); }

absl::StatusOr<HeldLocks> ListSqliteTableLocks(Dsn& dsn, const ListRequest& request) {
  SqliteTableStoreOptions options;
  absl::StatusOr<std::unique_ptr<SqliteTableBackend>> backend =
      BackendFromDsn(dsn, &options, /*read_only=*/true);
  if (!backend.ok()) return backend.status();
  const std::string describe = Describe(options);
  absl::StatusOr<HeldLocks> locks = ListTableLocks(**backend, describe, options.table, request);
  // No database file: nothing was ever locked there.
  if (absl::IsNotFound(locks.status())) return HeldLocks{describe, {}, {}};
  return locks;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewSqliteTableStore(
    const SqliteTableStoreOptions& options) {
  if (absl::Status s = SqliteLibrary().Load(kSqliteTableEntry.name); !s.ok()) return s;
  const std::string describe = Describe(options);
  if (absl::Status s = CheckSqlitePath(options.path, describe); !s.ok()) return s;
  auto backend =
      std::make_unique<SqliteTableBackend>(options.path, options.busy_timeout, describe);
  return MakeTableStore(kName, describe, kSqliteTableEntry.scope, options.table,
                        std::move(backend));
}

const StoreDriver kSqliteTableDriver = {
    &PrepareFromOptions<&OptionsFromDsn, nullptr, &SqliteTableCapabilities,
                        &NewSqliteTableStore>,
    &ListSqliteTableLocks, &SqliteLibrary};

}  // namespace ipclock
