// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "remote_peers.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "ipclock_config.h"

#if IPCLOCK_HAVE_REDIS
#include <hiredis/hiredis.h>
#endif
#if IPCLOCK_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

namespace ipclock_bench {

double RedisPing(const RunShape& shape, const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_REDIS
  // redis://[user:password@]host[:port][/db][?options]; only host and port
  // matter for a PING.
  absl::string_view rest = dsn;
  if (!absl::ConsumePrefix(&rest, "redis://")) {
    *why = "not a redis:// DSN";
    return -1;
  }
  rest = rest.substr(0, rest.find_first_of("/?"));
  if (size_t at = rest.rfind('@'); at != absl::string_view::npos) rest.remove_prefix(at + 1);
  std::string host(rest);
  int port = 6379;
  if (size_t colon = rest.rfind(':'); colon != absl::string_view::npos) {
    host = std::string(rest.substr(0, colon));
    if (!absl::SimpleAtoi(rest.substr(colon + 1), &port)) port = 6379;
  }
  if (host.empty()) host = "127.0.0.1";
  redisContext* c = redisConnect(host.c_str(), port);
  if (c == nullptr || c->err != 0) {
    *why = absl::StrCat("cannot connect to ", host, ":", port);
    if (c != nullptr) redisFree(c);
    return -1;
  }
  double ns = MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
      if (reply == nullptr) return false;
      freeReplyObject(reply);
    }
    return true;
  });
  redisFree(c);
  return ns;
#else
  (void)shape;
  (void)dsn;
  *why = "hiredis not built in";
  return -1;
#endif
}

double PostgresSelect1(const RunShape& shape, const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_POSTGRES
  // libpq takes postgresql:// URIs; ipclock's scheme adds "+advisory".
  std::string uri = dsn;
  if (size_t plus = uri.find("+advisory://"); plus != std::string::npos) {
    uri.erase(plus, 9);
  }
  PGconn* conn = PQconnectdb(uri.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    *why = absl::StrCat("cannot connect: ", PQerrorMessage(conn));
    PQfinish(conn);
    return -1;
  }
  double ns = MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      PGresult* r = PQexec(conn, "SELECT 1");
      bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
      PQclear(r);
      if (!ok) return false;
    }
    return true;
  });
  PQfinish(conn);
  return ns;
#else
  (void)shape;
  (void)dsn;
  *why = "libpq not built in";
  return -1;
#endif
}

}  // namespace ipclock_bench
