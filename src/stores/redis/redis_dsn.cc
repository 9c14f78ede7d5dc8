// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The `redis` DSN: redis://[user:password@]host[:port][/db][?options] or
// redis:///path/to/socket (include/ipclock/stores/redis_store.h lists the forms and
// options), turned into RedisStoreOptions.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/key_naming.h"
#include "core/options_driver.h"
#include "core/store_errors.h"
#include "platform/hiredis_calls.h"
#include "stores/redis/redis_store.h"

namespace ipclock {

namespace {

absl::StatusOr<RedisStoreOptions> RedisOptionsFromDsn(Dsn& dsn) {
  if (dsn.scheme() == "rediss") {
    return NotBuiltError(absl::StrCat(
        "ipclock: \"", dsn.redacted(), "\": Redis over TLS (rediss://) is not "
        "supported (hiredis is built without TLS here); use redis:// on a "
        "trusted network or through a TLS tunnel (stunnel, spiped). No other "
        "store is used in its place"));
  }
  if (!dsn.has_authority()) {
    return BadDsn(dsn, "expected redis://[user:password@]host[:port][/db] or "
                       "redis:///path/to/socket");
  }
  RedisStoreOptions options;
  std::optional<long> path_db;
  if (dsn.host().empty()) {
    if (dsn.path().size() < 2 || dsn.path()[0] != '/') {
      return BadDsn(dsn, "no host, and no absolute Unix socket path");
    }
    options.unix_socket = dsn.path();
  } else {
    options.host = dsn.host();
    if (dsn.port() != 0) options.port = dsn.port();
    absl::string_view path = dsn.path();
    if (!path.empty() && path != "/") {
      long db;
      if (!absl::SimpleAtoi(path.substr(1), &db) || db < 0 || db > INT32_MAX) {
        return BadDsn(dsn, "the path must be a db number (redis://host:port/2)");
      }
      path_db = db;
    }
  }
  // Symfony's forms: "user:password@", ":password@", and "password@" (no
  // colon: the whole userinfo is the password). The user "default" is the
  // server's default user, authenticated with the password alone.
  if (dsn.has_password()) {
    options.password = dsn.password();
    if (dsn.user() != "default") options.user = dsn.user();
  } else if (!dsn.user().empty()) {
    options.password = dsn.user();
  }
  absl::StatusOr<long> db = dsn.TakeInt("db", -1, 0, INT32_MAX);
  if (!db.ok()) return db.status();
  if (*db >= 0 && path_db) {
    return BadDsn(dsn, "the db is given twice (in the path and as ?db=)");
  }
  options.db = static_cast<int>(path_db ? *path_db : std::max<long>(*db, 0));

  const double max_timeout = absl::ToDoubleSeconds(kRedisMaxTimeout);
  absl::StatusOr<double> connect_timeout = dsn.TakeSeconds("connect_timeout", 5, max_timeout);
  if (!connect_timeout.ok()) return connect_timeout.status();
  absl::StatusOr<double> command_timeout = dsn.TakeSeconds("command_timeout", 5, max_timeout);
  if (!command_timeout.ok()) return command_timeout.status();
  options.connect_timeout = absl::Seconds(*connect_timeout);
  options.command_timeout = absl::Seconds(*command_timeout);

  std::optional<std::string> format = dsn.TakeOption("format");
  if (format && *format != "symfony" && *format != "simple") {
    return BadDsn(dsn, absl::StrCat("option format=", *format,
                                    ": expected symfony or simple"));
  }
  absl::StatusOr<bool> fencing = dsn.TakeBool("fencing", true);
  if (!fencing.ok()) return fencing.status();
  options.fencing = *fencing;
  absl::StatusOr<bool> tracking = dsn.TakeBool("tracking", true);
  if (!tracking.ok()) return tracking.status();
  options.tracking = *tracking;

  const std::string where = absl::StrCat(
      "redis://", options.unix_socket.empty()
                      ? absl::StrCat(options.host, ":", options.port)
                      : options.unix_socket);
  absl::StatusOr<KeyNamingOptions> naming = KeyNamingOptionsFromDsn(dsn, where);
  if (!naming.ok()) return naming.status();
  options.key_prefix = naming->prefix;
  options.secret = naming->secret;
  options.warn_without_secret = !naming->secret_none;
  if (naming->scheme == KeyNamingOptions::Scheme::kParseLock) {
    options.naming = RedisStoreOptions::Naming::kParseLock;
    if (format && *format == "symfony") {
      return BadDsn(dsn, "naming=parse-lock goes with format=simple");
    }
    options.format = RedisStoreOptions::Format::kSimple;
  }
  if (format) {
    options.format = *format == "simple" ? RedisStoreOptions::Format::kSimple
                                         : RedisStoreOptions::Format::kSymfony;
  }
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return options;
}

}  // namespace

const StoreDriver kRedisDriver = {
    &PrepareFromOptions<&RedisOptionsFromDsn, &CheckRedisOptions, &RedisCapabilities,
                        &NewRedisStore>,
    nullptr, &HiredisLibrary};

}  // namespace ipclock
