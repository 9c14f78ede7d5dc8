// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include <arpa/inet.h>
#include <glob.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ipclock/stores/postgres_store.h"
#include "own_server.h"
#include "spawn_util.h"
#include "postgres_fixture.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

const char* RequirePostgres() { return RequireEnv("IPCLOCK_TEST_POSTGRES"); }

std::string LibpqUri(absl::string_view dsn) {
  std::string uri(dsn);
  for (absl::string_view scheme : {"postgresql+advisory://", "pgsql+advisory://"}) {
    if (absl::StartsWith(uri, scheme)) {
      uri = absl::StrCat("postgresql://", uri.substr(scheme.size()));
    }
  }
  return uri;
}

std::string WithQuery(absl::string_view dsn, absl::string_view options) {
  if (options.empty()) return std::string(dsn);
  return absl::StrCat(dsn, absl::StrContains(dsn, '?') ? "&" : "?", options);
}

PgConn ConnectTo(absl::string_view dsn) {
  PgConn conn(PQconnectdb(LibpqUri(dsn).c_str()));
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    fail_msg("connect: %s", PQerrorMessage(conn.get()));
  }
  return conn;
}

std::string Query(PGconn* conn, const std::string& sql) {
  PGresult* r = PQexec(conn, sql.c_str());
  ExecStatusType s = PQresultStatus(r);
  if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK) {
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    fail_msg("%s: %s", sql.c_str(), msg.c_str());
  }
  std::string value = PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
  PQclear(r);
  return value;
}

int TerminateHolder(PGconn* admin, const std::string& resource) {
  const uint64_t id = static_cast<uint64_t>(
      ipclock::PostgresLockId(resource, ipclock::PostgresLockIdScheme::kNative));
  // A bigint advisory lock shows in pg_locks as classid = high 32 bits,
  // objid = low 32 bits, objsubid = 1.
  return std::stoi(Query(
      admin, absl::StrCat("SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) "
                          "FROM pg_locks WHERE locktype = 'advisory' AND granted "
                          "AND classid = ", id >> 32, " AND objid = ", id & 0xffffffffu,
                          " AND objsubid = 1) t")));
}

// --- PostgresServer ------------------------------------------------------------------

namespace {

int OwnPortBase() { return TestPortBase() + 90; }

// The newest /usr/lib/postgresql/*/bin with initdb, or "".
std::string ServerBinDir() {
  glob_t g;
  std::string found;
  if (glob("/usr/lib/postgresql/*/bin/initdb", 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      std::string p = g.gl_pathv[i];
      found = p.substr(0, p.size() - strlen("/initdb"));
    }
  }
  globfree(&g);
  return found;
}

// initdb and the server refuse to run as root: run them as `postgres`, from
// / (PostgreSQL's programs go back to the dir they started in, which
// `postgres` may not enter: root's home).
std::vector<std::string> AsServerUser(std::vector<std::string> argv) {
  if (geteuid() != 0) return argv;
  std::vector<std::string> out = {"env", "-C", "/", "runuser", "-u", "postgres", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace

bool PostgresServer::PgCtl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {absl::StrCat(bindir_, "/pg_ctl"), "-D",
                                   absl::StrCat(dir_, "/data"), "-l",
                                   absl::StrCat(dir_, "/server.log"), "-w", "-t", "60"};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions quiet;
  quiet.stdout_path = absl::StrCat(dir_, "/pg_ctl.out");
  return WaitPlain(Spawn(AsServerUser(argv), quiet), 90) == 0;
}

const char* PostgresServer::Start() {
  if (running_) return nullptr;
  if (bindir_.empty()) bindir_ = ServerBinDir();
  if (bindir_.empty()) return "no PostgreSQL server binaries (apt-get install postgresql)";
  if (geteuid() == 0 && getpwnam("postgres") == nullptr) {
    return "running as root without a postgres user to run the server as";
  }
  if (dir_.empty()) {
    dir_ = MakeTempDir();
    if (geteuid() == 0) {
      struct passwd* pw = getpwnam("postgres");
      if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) return "cannot chown the server's dir";
    }
    SpawnOptions quiet;
    quiet.stdout_path = absl::StrCat(dir_, "/initdb.out");
    quiet.stderr_path = absl::StrCat(dir_, "/initdb.err");
    if (WaitPlain(Spawn(AsServerUser({absl::StrCat(bindir_, "/initdb"), "-D",
                                      absl::StrCat(dir_, "/data"), "-U", "ipclock",
                                      "--auth=trust", "-E", "UTF8", "--no-locale"}),
                        quiet),
                  120) != 0) {
      fail_msg("initdb failed: %s", ReadFileOrEmpty(absl::StrCat(dir_, "/initdb.err")).c_str());
    }
  }
  if (port_ == 0) {
    for (int p = OwnPortBase(); p < OwnPortBase() + 9 && port_ == 0; ++p) {
      if (!Listening(p)) port_ = p;
    }
    if (port_ == 0) return "no free port in $IPCLOCK_TEST_PORT_BASE+90..98 for a test PostgreSQL";
  }
  const std::string options =
      absl::StrCat("-c listen_addresses=127.0.0.1 -p ", port_, " -k ", dir_,
                   " -c fsync=off -c autovacuum=off");
  if (!PgCtl({"-o", options, "start"})) {
    fail_msg("pg_ctl start failed: %s",
             ReadFileOrEmpty(absl::StrCat(dir_, "/server.log")).c_str());
  }
  running_ = true;
  return nullptr;
}

void PostgresServer::Stop(const char* mode) {
  if (!running_) return;
  PgCtl({"-m", mode, "stop"});
  running_ = false;
}

void PostgresServer::Restart(const char* mode) {
  if (!PgCtl({"-m", mode, "restart"})) {
    fail_msg("pg_ctl restart failed: %s",
             ReadFileOrEmpty(absl::StrCat(dir_, "/server.log")).c_str());
  }
}

std::string PostgresServer::dsn(absl::string_view db) const {
  return absl::StrCat("postgresql+advisory://ipclock@127.0.0.1:", port_, "/", db);
}

namespace {
PostgresServer* g_own = nullptr;
pid_t g_own_pid = 0;
// At exit of the test process (not of its forked children): the server is
// a daemon, and would outlive the test otherwise. Registered after the temp
// dir's removal, so it runs first.
void StopOwnPostgres() {
  if (g_own != nullptr && getpid() == g_own_pid) g_own->Stop();
}
}  // namespace

PostgresServer& OwnPostgres() {
  if (g_own == nullptr) g_own = new PostgresServer();
  SkipIf(g_own->Start(), UnderCi());
  if (g_own_pid == 0) {
    g_own_pid = getpid();
    atexit(StopOwnPostgres);
  }
  return *g_own;
}

}  // namespace ipclock_test
