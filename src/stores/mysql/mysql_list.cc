// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list` for mysql+advisory://: the named locks the server holds.
// A server shows them where it was asked to: the metadata_lock_info plugin
// (information_schema.METADATA_LOCK_INFO, MariaDB) or performance_schema
// (metadata_locks, MariaDB 10.5+ and MySQL 5.7+, off by default on
// MariaDB, and its metadata-lock instrument with it). Without either, only a
// lock asked for by name can be found, through IS_USED_LOCK.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "platform/wall_clock.h"
#include "stores/connections/mysql_conn.h"
#include "stores/connections/mysql_dsn.h"
#include "stores/mysql/mysql_lock_name.h"
#include "stores/mysql/mysql_store.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "mysql+advisory";

struct Found {
  std::string name;
  uint64_t session = 0;
  std::optional<int64_t> held_ms;
};

// The sessions' users and client addresses, for the listing's details.
struct Session {
  std::string user;
  std::string host;
};

// Whether `name` may be a hashed name (64 characters ending in 40 hex
// digits: Laravel's for a long resource, Symfony's for every one), whose
// resource cannot be read back.
bool MaybeHashed(absl::string_view name) {
  if (Utf8Length(name).value_or(0) != 64 || name.size() < 40) return false;
  for (char c : name.substr(name.size() - 40)) {
    if (!absl::ascii_isdigit(c) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

absl::StatusOr<MyResult> Ask(MyConnection& conn, const std::string& sql) {
  return MyQuery(conn, sql, Deadline::In(absl::Seconds(kMyIoTimeoutSeconds)));
}

std::string Value(const std::vector<std::optional<std::string>>& row, size_t i) {
  return i < row.size() && row[i] ? *row[i] : std::string();
}

// Rows of (name, session, held ms) from the first source the server has
// (METADATA_LOCK_INFO keeps a user lock's name in TABLE_SCHEMA);
// nullopt when it has none.
absl::StatusOr<std::optional<std::vector<Found>>> FromServerTables(
    MyConnection& conn, const std::optional<std::string>& name_sql,
    const std::string& describe) {
  const std::string only = name_sql ? absl::StrCat(" AND m.TABLE_SCHEMA = ", *name_sql) : "";
  absl::StatusOr<MyResult> r = Ask(
      conn, absl::StrCat("SELECT m.TABLE_SCHEMA, m.THREAD_ID, m.LOCK_TIME_MS FROM "
                         "information_schema.METADATA_LOCK_INFO m WHERE m.LOCK_TYPE = "
                         "'User lock'",
                         only, " ORDER BY m.TABLE_SCHEMA"));
  if (!r.ok()) return TransientError(describe, "", r.status().message());
  if (!r->failed()) {
    std::vector<Found> out;
    for (const auto& row : r->rows) {
      Found f;
      f.name = Value(row, 0);
      if (!absl::SimpleAtoi(Value(row, 1), &f.session)) f.session = 0;  // unknown
      int64_t ms;
      if (absl::SimpleAtoi(Value(row, 2), &ms)) f.held_ms = ms;
      out.push_back(std::move(f));
    }
    return std::optional<std::vector<Found>>(std::move(out));
  }
  // No plugin (1109: unknown table). performance_schema, if it is on.
  // performance_schema shows metadata locks only with their instrument on
  // (off by default on MariaDB), and only those taken since it was turned
  // on: an empty table would otherwise pass for "nothing held".
  r = Ask(conn,
          "SELECT @@performance_schema, (SELECT ENABLED FROM "
          "performance_schema.setup_instruments WHERE NAME = 'wait/lock/metadata/sql/mdl')");
  if (!r.ok()) return TransientError(describe, "", r.status().message());
  if (r->failed() || r->rows.empty() || Value(r->rows[0], 0) != "1" ||
      Value(r->rows[0], 1) != "YES") {
    return std::optional<std::vector<Found>>();
  }
  const std::string only_ps = name_sql ? absl::StrCat(" AND m.OBJECT_NAME = ", *name_sql) : "";
  r = Ask(conn, absl::StrCat("SELECT m.OBJECT_NAME, t.PROCESSLIST_ID FROM "
                             "performance_schema.metadata_locks m JOIN "
                             "performance_schema.threads t ON t.THREAD_ID = "
                             "m.OWNER_THREAD_ID WHERE m.OBJECT_TYPE = 'USER LEVEL LOCK' "
                             "AND m.LOCK_STATUS = 'GRANTED'",
                             only_ps, " ORDER BY m.OBJECT_NAME"));
  if (!r.ok()) return TransientError(describe, "", r.status().message());
  if (r->failed()) {
    return MyFaultOf(r->error)(
        describe, "",
        absl::StrCat("read performance_schema.metadata_locks: ", r->ErrorText()));
  }
  std::vector<Found> out;
  for (const auto& row : r->rows) {
    Found f;
    f.name = Value(row, 0);
    if (!absl::SimpleAtoi(Value(row, 1), &f.session)) f.session = 0;  // unknown
    out.push_back(std::move(f));
  }
  return std::optional<std::vector<Found>>(std::move(out));
}

}  // namespace

absl::StatusOr<HeldLocks> ListMysqlAdvisoryLocks(Dsn& dsn,
                                                             const ListRequest& request) {
  if (!dsn.has_authority()) {
    return BadDsn(dsn, "expected mysql+advisory://user:password@host:port/db");
  }
  absl::StatusOr<MysqlConnectionOptions> options = MysqlConnectionFromDsn(dsn);
  if (!options.ok()) return options.status();
  // The naming scheme says what a resource asked for is called; the
  // store's other options have no bearing on a listing.
  const std::optional<std::string> scheme = dsn.TakeOption("scheme");
  if (scheme && *scheme != "laravel" && *scheme != "symfony") {
    return BadDsn(dsn, absl::StrCat("scheme=", *scheme, ": expected laravel or symfony"));
  }
  const bool symfony = scheme && *scheme == "symfony";
  for (absl::string_view unused : {"max_idle", "wait_timeout", "wait_slice"}) {
    dsn.TakeOption(unused);
  }
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  const std::string describe = DescribeMysql(kName, *options);
  std::optional<std::string> name;
  std::optional<std::string> name_sql;
  if (request.resource) {
    name = symfony ? MysqlSymfonyLockName(*request.resource) : MysqlLockName(*request.resource);
    name_sql = MyUtf8Literal(*name);
  }
  absl::StatusOr<MyConnection> conn = MyConnect(*options, {}, describe);
  if (!conn.ok()) return conn.status();

  absl::StatusOr<std::optional<std::vector<Found>>> found =
      FromServerTables(*conn, name_sql, describe);
  if (!found.ok()) return found.status();
  if (!found->has_value()) {
    if (!name_sql) {
      return MisuseError(
          describe, "",
          "the server shows no list of named locks: load the metadata_lock_info "
          "plugin (INSTALL SONAME 'metadata_lock_info'), or turn performance_schema "
          "on with its instrument wait/lock/metadata/sql/mdl enabled (it shows the "
          "locks taken since); one lock can still be asked for by its resource name");
    }
    absl::StatusOr<MyResult> r = Ask(*conn, absl::StrCat("SELECT IS_USED_LOCK(", *name_sql, ")"));
    if (!r.ok()) return TransientError(describe, "", r.status().message());
    if (r->failed()) return MyFaultOf(r->error)(describe, "", r->ErrorText());
    std::vector<Found> one;
    uint64_t session = 0;
    if (!r->rows.empty() && absl::SimpleAtoi(Value(r->rows[0], 0), &session)) {
      one.push_back(Found{*name, session, std::nullopt});
    }
    found->emplace(std::move(one));
  }

  absl::StatusOr<MyResult> who =
      Ask(*conn, "SELECT ID, USER, HOST FROM information_schema.PROCESSLIST");
  std::vector<std::pair<uint64_t, Session>> sessions;
  if (who.ok() && !who->failed()) {
    for (const auto& row : who->rows) {
      uint64_t id = 0;
      if (absl::SimpleAtoi(Value(row, 0), &id)) {
        sessions.push_back({id, Session{Value(row, 1), Value(row, 2)}});
      }
    }
  }
  std::vector<HeldLock> out;
  const int64_t now_s = absl::ToUnixSeconds(WallClockNow());
  for (const Found& f : **found) {
    HeldLock lock;
    // Names of at most 64 characters are the resource itself; longer
    // resources are known only by their hashed name, unless asked for.
    if (request.resource) {
      lock.resource = *request.resource;
    } else if (!MaybeHashed(f.name)) {
      lock.resource = f.name;
    }
    lock.object = f.name;
    lock.mode = "exclusive";
    if (f.held_ms) {
      lock.since = now_s - *f.held_ms / 1000;
      lock.since_source = "the server's lock time";
    }
    lock.number_details.emplace_back("session", static_cast<int64_t>(f.session));
    for (const auto& [id, s] : sessions) {
      if (id != f.session) continue;
      lock.text_details.emplace_back("user", s.user);
      lock.text_details.emplace_back("client", s.host);
    }
    out.push_back(std::move(lock));
  }
  return HeldLocks{describe, std::move(out), {}};
}

}  // namespace ipclock
