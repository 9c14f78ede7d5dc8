// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Every option of every store, given bad values, run through `ipclock run`
// as a user would run it, without -w: empty, huge, negative, out of range
// and wrong-typed values; percent-encoded NUL and control bytes; option
// names written percent-encoded; special files (a FIFO, a device, a dir, a
// socket, a /proc file) wherever a DSN or an option names a file; and
// well-formed servers that cannot be reached. A permanent fault must end
// the run within 2 s (LimitSeconds()) with the status of its class
// (include/ipclock/errors.h, doc/ipclock.1) and a message that names the
// option; so must a server that cannot be reached, which a run without -w
// does not wait for (69, saying how to wait for it). A run that says it
// tries again, or that waits, fails its row.
//
// The rows of one store run at once, kParallel processes at a time; a whole
// store's table takes about as long as its slowest row. Sanitizer builds
// run a share of the rows (Stride()). The rows' helpers and the runner are
// in dsn_fault_rows.cc. Rows of a store this build left out
// are skipped; rows that need one of the servers of tools/test-servers are
// skipped when its variable is unset (failed under CI=true).

#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "cli_util.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "dsn_fault_rows.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using namespace ipclock_test;

// --- Local stores --------------------------------------------------------------------

void Flock(void**) {
  const Files& f = Fixtures();
  const std::string dir = MakeTempDir();
  const std::string base = "flock://" + dir;
  std::vector<Row> rows;
  AddChoice(&rows, base, "naming");
  AddMode(&rows, base, "dir_mode");
  AddMode(&rows, base, "file_mode");
  AddBool(&rows, base, "record");
  AddBool(&rows, base, "map_record");
  AddBool(&rows, base, "fair");
  rows.push_back({With(base, "naming=path&fair=true"), kUsage, "fair"});
  AddNumber(&rows, base, "idle_files", 0, 4096);
  AddChoice(&rows, base, "removeipc");
  AddUnknown(&rows, base);
  // The lock dir: a FIFO, a file, a device, a path under /proc.
  for (const std::string& path : {f.fifo, f.regular, std::string("/dev/zero"), f.socket}) {
    rows.push_back({"flock://" + path, kUsage, path});
  }
  rows.push_back({"flock://relative", kUsage, "three slashes"});
  rows.push_back({"flock:relative", kUsage, "absolute"});
  // --file on every file type it must not lock.
  for (const std::string& path : {f.fifo, f.socket, std::string("/dev/null")}) {
    rows.push_back({"", kUsage, path, {"--file", path}});
  }
  // -s is fine on flock; --permits is not.
  rows.push_back({base, kUsage, "counting", {"--permits", "2"}});
  RunRows(rows);
}

void Shm(void**) {
  const std::string base = "shm://" + UniqueShmName("fault");
  std::vector<Row> rows;
  AddMode(&rows, base, "mode");
  AddNumber(&rows, base, "capacity", 1, 1 << 22);
  AddBool(&rows, base, "pi");
  AddBool(&rows, base, "fair");
  AddChoice(&rows, base, "removeipc");
  AddUnknown(&rows, base);
  rows.push_back({"shm://", kUsage, "segment name"});
  rows.push_back({"shm://a%2Fb", kUsage, "a/b"});
  rows.push_back({"shm://" + std::string(300, 'n'), kUsage, "segment name"});
  rows.push_back({base, kUsage, "shared", {"-s"}});
  RunRows(rows);
}

void Semaphores(void**) {
  std::vector<Row> rows;
  for (const std::string base : {"semaphore", "posix-semaphore"}) {
    AddMode(&rows, base, "mode");
    AddNumber(&rows, base, "keep_idle", 0, 4096);
    AddChoice(&rows, base, "removeipc");
    AddUnknown(&rows, base);
    rows.push_back({base + "://host", kUsage, "no address"});
    rows.push_back({base, kUsage, "shared", {"-s"}});
  }
  AddChoice(&rows, "semaphore", "key_scheme");
  AddBool(&rows, "semaphore", "fair");
  AddBool(&rows, "posix-semaphore", "fair");
  for (const char* prefix : {"a/b", "", "x%20y"}) {
    rows.push_back({absl::StrCat("posix-semaphore:?prefix=", prefix), kUsage, "prefix"});
  }
  rows.push_back({"posix-semaphore:?prefix=" + std::string(70, 'p'), kUsage, "prefix"});
  RunRows(rows);
}

void InMemoryCombinedDegraded(void**) {
  std::vector<Row> rows;
  AddUnknown(&rows, "in-memory");
  rows.push_back({"in-memory://host", kUsage, "no address"});
  // An encoded option name is the option it spells, wherever it is read.
  rows.push_back({"in-memory?fall%62ack=flock&bogus=1", kUsage, "bogus"});
  const std::string two = "combined:?store1=in-memory&store2=in-memory";
  AddChoice(&rows, two, "strategy");
  AddUnknown(&rows, two);
  rows.push_back({"combined:", kUsage, "no members"});
  rows.push_back({"combined:?store1=in-memory&store3=in-memory", kUsage, "store1"});
  rows.push_back({"combined:?store1=in-memory%3Fcolour%3Dblue", kUsage, "colour"});
  rows.push_back({"combined:?store1=in-memory%3Fc%256Flour%3Dblue", kUsage, "colour"});
  rows.push_back({"combined:?store1=in-memory%3Ffall%2562ack%3Dflock%26bogus%3D1", kUsage,
                  "bogus"});
  // A member's own file check: flock is in every build, sqlite only where
  // this build has it (the combined store itself always is).
  rows.push_back({"combined:?store1=flock%3A%2F%2F%2Fdev%2Fzero&store2=in-memory", kUsage,
                  "/dev/zero"});
  if (absl::StatusOr<ipclock::StoreInfo> sqlite = ipclock::FindStore("sqlite");
      sqlite.ok() && sqlite->built) {
    rows.push_back({"combined:?store1=sqlite%3A%2F%2F%2Fdev%2Fzero&store2=in-memory", kUsage,
                    "/dev/zero"});
  }
  // Degraded mode: its options, and a fallback with a fault of its own (the
  // remote store is never tried), written plain and percent-encoded.
  const std::string remote = "redis://127.0.0.1:1";
  rows.push_back({remote + "?degraded=warn", kUsage, "fallback"});
  rows.push_back({remote + "?fallback=in-memory&degraded=loud", kUsage, "degraded"});
  rows.push_back({remote + "?fallback=in-memory&de%67raded=loud", kUsage, "degraded"});
  rows.push_back({remote + "?fall%62ack=in-memory%3Fbogus%3D1&degraded=warn", kUsage, "bogus"});
  rows.push_back({remote + "?fallback=flock%3A%2F%2F%2Fdev%2Fzero&degraded=warn", kUsage,
                  "/dev/zero"});
  rows.push_back({remote + "?fallback=in-memory%3Ffallback%3Dflock&degraded=warn", kUsage,
                  "fallback of its own"});
  rows.push_back({remote + "?fallback=redis%3A%2F%2F127.0.0.1%3A2&degraded=warn", kUsage,
                  "remote store"});
  RunRows(rows);
}

// --- Remote stores ---------------------------------------------------------------------

// Nothing listens on port 1 of the loopback address.
void Redis(void**) {
  const Files& f = Fixtures();
  const std::string base = "redis://127.0.0.1:1?secret=none";
  std::vector<Row> rows;
  AddNumber(&rows, base, "db", 0, 2147483647);
  AddSeconds(&rows, base, "connect_timeout", 3600);
  AddSeconds(&rows, base, "command_timeout", 3600);
  AddChoice(&rows, base, "format");
  AddBool(&rows, base, "fencing");
  AddBool(&rows, base, "tracking");
  AddNaming(&rows, "redis://127.0.0.1:1");
  AddUnknown(&rows, base);
  rows.push_back({"redis://127.0.0.1:1/abc?secret=none", kUsage, "db number"});
  rows.push_back({"redis://127.0.0.1:1/1?db=2&secret=none", kUsage, "db"});
  rows.push_back({"redis://127.0.0.1:99999?secret=none", kUsage, "99999"});
  rows.push_back({"redis://a%2Fb:6379?secret=none", kUsage, "host"});
  rows.push_back({"rediss://127.0.0.1:1", 69, "rediss"});
  rows.push_back({"redis://127.0.0.1:1?naming=parse-lock&format=symfony&secret=none", kUsage,
                  "parse-lock"});
  // The Unix socket: files of the wrong type, and a path too long.
  for (const std::string& path : {f.fifo, f.regular, f.dir, std::string("/dev/zero")}) {
    rows.push_back({"redis://" + path + "?secret=none", kUsage, path});
  }
  rows.push_back({"redis://" + f.dir + "/" + std::string(120, 's') + "?secret=none", kUsage,
                  "107"});
  // What the run asks that the store cannot do, found before any server.
  rows.push_back({base + "&format=simple", kUsage, "shared", {"-s"}});
  rows.push_back({base, kUsage, "counting", {"--permits", "2"}});
  rows.push_back({base, kUsage, "--ttl", {"--ttl", "1e12"}});
  // Well formed, and no server there: transient.
  rows.push_back({base, kUnreachable, "127.0.0.1:1"});
  rows.push_back({"redis://" + f.missing + "?secret=none", kUnreachable, f.missing});
  rows.push_back({"redis://" + f.socket + "?secret=none", kUnreachable, f.socket});
  if (std::optional<std::string> auth = Server("IPCLOCK_TEST_REDIS_AUTH")) {
    // A wrong password: refused.
    const std::string wrong = absl::StrReplaceAll(
        *auth, {{"redis://:", "redis://:wrong-password-"}});
    rows.push_back({wrong + "?secret=none", kNoPermission, "AUTH"});
  }
  RunRows(rows);
}

void Postgres(void**) {
  const Files& f = Fixtures();
  std::vector<Row> rows;
  for (const std::string base :
       {"postgresql+advisory://u:p@127.0.0.1:1/db", "postgresql://u:p@127.0.0.1:1/db"}) {
    AddNumber(&rows, base, "connect_timeout", 0, 3600);
    AddNumber(&rows, base, "max_idle", 0, 1024);
    AddUnknown(&rows, base);
    // libpq's own keywords, checked before libpq sees them.
    for (const char* name : {"sslmode", "gssencmode", "channel_binding", "target_session_attrs",
                             "ssl_min_protocol_version"}) {
      rows.push_back({With(base, absl::StrCat(name, "=bogus")), kUsage, name});
      rows.push_back({With(base, absl::StrCat(Encoded(name), "=bogus")), kUsage, name});
    }
    for (const char* name : {"keepalives_idle", "keepalives_count", "tcp_user_timeout"}) {
      for (const char* v : {"-1", "abc", "99999999999"}) {
        rows.push_back({With(base, absl::StrCat(name, "=", v)), kUsage, name});
      }
    }
    rows.push_back({With(base, "keepalives=2"), kUsage, "keepalives"});
    rows.push_back({With(base, "port=99999"), kUsage, "port"});
    rows.push_back({With(base, "port=1,2"), kUsage, "port"});
    rows.push_back({With(base, "hostaddr=not-an-address"), kUsage, "hostaddr"});
    rows.push_back({With(base, "host=a%2Fb"), kUsage, "host"});
    rows.push_back({With(base, "password=x"), kUsage, "password"});
    rows.push_back({With(base, "service=no-such-service"), kUsage, "no-such-service"});
    rows.push_back({With(base, "options=-c%20foo"), kUnreachable, "127.0.0.1"});
    for (const char* name : {"sslcert", "sslkey", "sslrootcert", "sslcrl", "passfile"}) {
      AddFileOption(&rows, base, name, /*must_exist=*/false);
    }
    // A socket dir that is not a dir, and one too long for its socket.
    for (const std::string& path : {f.fifo, f.regular, std::string("/dev/zero")}) {
      rows.push_back({With(base, "host=" + path), kUsage, path});
    }
    rows.push_back({With(base, "host=/" + std::string(100, 'd')), kUsage, "too long"});
    rows.push_back({base, kUsage, "counting", {"--permits", "2"}});
    rows.push_back({"pgsql://u:p@127.0.0.1:99999/db", kUsage, "99999"});
    rows.push_back({base, kUnreachable, "127.0.0.1"});
  }
  AddChoice(&rows, "postgresql+advisory://u:p@127.0.0.1:1/db", "scheme");
  AddChoice(&rows, "postgresql+advisory://u:p@127.0.0.1:1/db", "level");
  rows.push_back({"postgresql+advisory://u:p@127.0.0.1:1/db?level=transaction", kUsage,
                  "PostgresTransactionLock"});
  rows.push_back({"pgsql+advisory:host=127.0.0.1", kUsage, "expected"});
  // The table store: PDO's form, and Symfony's table options.
  const std::string table = "postgresql://u:p@127.0.0.1:1/db";
  for (const char* pdo :
       {"pgsql:host=127.0.0.1;port=99999;dbname=x", "pgsql:host=127.0.0.1;bogus=1",
        "pgsql:dbname=x", "pgsql:host=127.0.0.1;port", "pgsql:host=127.0.0.1;sslmode=bogus"}) {
    rows.push_back({pdo, kUsage, "pgsql:"});
  }
  rows.push_back({"pgsql:host=127.0.0.1;password=x", kUsage, "password"});
  for (const char* name : {"db_table", "db_id_col", "db_token_col", "db_expiration_col"}) {
    for (const char* v : {"", "a%20b", "a;b", "x%27y"}) {
      rows.push_back({With(table, absl::StrCat(name, "=", v)), kUsage, name});
    }
  }
  for (const char* v : {"", "-0.5", "2", "abc", "nan"}) {
    rows.push_back({With(table, absl::StrCat("gc_probability=", v)), kUsage, "gc_probability"});
  }
  rows.push_back({"pgsql:host=127.0.0.1;port=1;dbname=x", kUnreachable, "127.0.0.1"});
  if (std::optional<std::string> server = Server("IPCLOCK_TEST_POSTGRES")) {
    // A name the server can never accept; a wrong password.
    const std::string no_db = server->substr(0, server->rfind('/')) + "/no_such_database";
    rows.push_back({no_db, kUsage, "no_such_database"});
    rows.push_back({absl::StrReplaceAll(*server, {{"ipclock:", "ipclock:wrong-"}}), kNoPermission,
                    "password"});
    rows.push_back({With(*server, "options=-c%20no_such.setting%3D1%20-c%20bogus%3D1"), kUsage,
                    "bogus"});
  }
  RunRows(rows);
}

void Mysql(void**) {
  const Files& f = Fixtures();
  std::vector<Row> rows;
  for (const std::string base :
       {"mysql+advisory://u:p@127.0.0.1:1/db", "mysql://u:p@127.0.0.1:1/db"}) {
    AddNumber(&rows, base, "connect_timeout", 1, 3600);
    AddNumber(&rows, base, "max_idle", 0, 1024);
    AddChoice(&rows, base, "ssl_mode");
    AddUnknown(&rows, base);
    rows.push_back({With(base, "ssl_mode=verify_identity"), kUsage, "ssl_ca"});
    rows.push_back({With(base, "ssl_ca=/x"), kUsage, "ssl_mode"});
    AddFileOption(&rows, base + "?ssl_mode=verify_identity", "ssl_ca", /*must_exist=*/true);
    rows.push_back({With(base, "password=x"), kUsage, "password"});
    rows.push_back({"mysql+advisory://u:p@a%2Fb:1/db", kUsage, "host"});
    // The Unix socket: files of the wrong type, a relative path, one too
    // long; and one nobody serves (transient).
    const std::string local = absl::StrReplaceAll(base, {{"127.0.0.1:1", "localhost"}});
    for (const std::string& path : {f.fifo, f.regular, f.dir, std::string("/dev/zero")}) {
      rows.push_back({With(local, "unix_socket=" + path), kUsage, "unix_socket"});
    }
    rows.push_back({With(local, "unix_socket=relative"), kUsage, "unix_socket"});
    rows.push_back({With(local, "unix_socket=/" + std::string(120, 's')), kUsage, "107"});
    rows.push_back({With(base, "unix_socket=" + f.socket), kUsage, "localhost"});
    rows.push_back({With(local, "unix_socket=" + f.missing), kUnreachable, f.missing});
    rows.push_back({base, kUsage, "shared", {"-s"}});
    rows.push_back({base, kUnreachable, "127.0.0.1"});
  }
  const std::string advisory = "mysql+advisory://u:p@127.0.0.1:1/db";
  AddNumber(&rows, advisory, "wait_timeout", 1, 31536000);
  AddSeconds(&rows, advisory, "wait_slice", 3600);
  rows.push_back({With(advisory, "wait_slice=0.001"), kUsage, "wait_slice"});
  AddChoice(&rows, advisory, "scheme");
  for (const char* pdo :
       {"mysql:host=127.0.0.1;port=99999;dbname=x", "mysql:host=127.0.0.1;bogus=1",
        "mysql:dbname=x", "mysql:host=127.0.0.1;charset=latin1", "mysql:host=127.0.0.1;port"}) {
    rows.push_back({pdo, kUsage, "mysql:"});
  }
  rows.push_back({"mysql:host=127.0.0.1;password=x", kUsage, "password"});
  rows.push_back({"mysql:host=127.0.0.1;PWD=x", kUsage, "password"});
  if (std::optional<std::string> server = Server("IPCLOCK_TEST_MYSQL")) {
    const std::string no_db = server->substr(0, server->rfind('/')) + "/no_such_database";
    rows.push_back({no_db, kUsage, "no_such_database"});
    rows.push_back({absl::StrReplaceAll(*server, {{"ipclock:", "ipclock:wrong-"}}), kNoPermission,
                    "Access denied"});
  }
  RunRows(rows);
}

void Sqlite(void**) {
  const Files& f = Fixtures();
  const std::string db = MakeTempDir() + "/locks.db";
  const std::string base = "sqlite://" + db;
  std::vector<Row> rows;
  AddSeconds(&rows, base, "busy_timeout", 3600);
  AddUnknown(&rows, base);
  for (const char* v : {"", "2", "abc"}) {
    rows.push_back({With(base, absl::StrCat("gc_probability=", v)), kUsage, "gc_probability"});
  }
  rows.push_back({With(base, "db_table=a%20b"), kUsage, "db_table"});
  // The database: every file type it must not be, a path under /proc, a
  // dir that is not there, a path too long for SQLite, a file that is not
  // a database.
  for (const std::string& path :
       {f.fifo, f.dir, f.socket, std::string("/dev/zero"), std::string("/dev/null"),
        std::string("/proc/self/status"), std::string("/proc/self/new.db"),
        f.missing + "/locks.db", "/" + std::string(600, 'p'), f.regular}) {
    rows.push_back({"sqlite://" + path, kUsage, path.substr(0, 40)});
    rows.push_back({"sqlite:" + path, kUsage, path.substr(0, 40)});
  }
  // A database whose WAL file is a FIFO.
  const std::string wal_db = MakeTempDir() + "/wal.db";
  assert_int_equal(mkfifo((wal_db + "-wal").c_str(), 0600), 0);
  rows.push_back({"sqlite://" + wal_db, kUsage, "wal.db-wal"});
  rows.push_back({"sqlite:///:memory:", kUsage, "in-memory"});
  rows.push_back({"sqlite:relative.db", kUsage, "absolute"});
  rows.push_back({"sqlite://host/x.db", kUsage, "no host"});
  rows.push_back({base, kUsage, "shared", {"-s"}});
  rows.push_back({base, kUsage, "--ttl", {"--ttl", "1e12"}});
  RunRows(rows);
}

void Memcached(void**) {
  const Files& f = Fixtures();
  const std::string base = "memcached://127.0.0.1:1?secret=none";
  std::vector<Row> rows;
  for (const char* name : {"connect_timeout", "poll_timeout", "send_timeout", "recv_timeout",
                           "retry_timeout"}) {
    AddNumber(&rows, base, name, 0, 2147483647);
  }
  AddNumber(&rows, base, "weight", 0, 2147483647);
  for (const char* name : {"tcp_nodelay", "no_block", "libketama_compatible", "compression",
                           "binary_protocol", "record"}) {
    AddBool(&rows, base, name);
  }
  rows.push_back({With(base, "binary_protocol=true"), kUsage, "binary_protocol"});
  AddChoice(&rows, base, "serializer");
  rows.push_back({With(base, "prefix_key=" + std::string(200, 'k')), kUsage, "prefix_key"});
  rows.push_back({With(base, "prefix_key=a%20b"), kUsage, "prefix_key"});
  AddNaming(&rows, "memcached://127.0.0.1:1");
  AddUnknown(&rows, base);
  rows.push_back({"memcached://u:p@127.0.0.1:1?secret=none", kUsage, "SASL"});
  rows.push_back({"memcached:?secret=none", kUsage, "expected"});
  rows.push_back({"memcached://127.0.0.1:1/x?secret=none", kUsage, "weight"});
  rows.push_back({"memcached://a%2Fb:1?secret=none", kUsage, "host"});
  // host[...] entries: a bad port, weight or host, and more servers than
  // libmemcached takes (it aborts the process past 100).
  for (const char* h : {"host[127.0.0.1:99999]=1", "host[127.0.0.1:1]=-1", "host[127.0.0.1:1]=x",
                        "host[:1]=1", "host[a%2Fb:1]=1", "h%6Fst[127.0.0.1:1]=x"}) {
    rows.push_back({absl::StrCat("memcached:?secret=none&", h), kUsage, "host"});
  }
  std::string many = "memcached:?secret=none";
  for (int i = 0; i < 101; ++i) absl::StrAppend(&many, "&host[127.0.0.1:", 1000 + i, "]=1");
  rows.push_back({many, kUsage, "101 servers"});
  // A Unix socket of the wrong type, or too long.
  for (const std::string& path : {f.fifo, f.regular, f.dir, std::string("/dev/zero")}) {
    rows.push_back({"memcached://" + path + "?secret=none", kUsage, path});
  }
  rows.push_back({"memcached://" + f.dir + "/" + std::string(120, 's') + "?secret=none", kUsage,
                  "107"});
  rows.push_back({base, kUsage, "shared", {"-s"}});
  rows.push_back({base, kUsage, "--ttl", {"--ttl", "1e12"}});
  rows.push_back({base, kUsage, "30 days", {"--ttl", "3000000"}});
  rows.push_back({"memcached://127.0.0.1:1?secret=none", kUsage, "--ttl", {"--ttl", "2592000"}});
  rows.push_back({base, kUnreachable, "127.0.0.1:1"});
  rows.push_back({"memcached://" + f.missing + "?secret=none", kUnreachable, f.missing});
  RunRows(rows);
}

void ZooKeeper(void**) {
  const std::string base = "zookeeper://127.0.0.1:1?secret=none&connect_timeout=1";
  std::vector<Row> rows;
  AddSeconds(&rows, "zookeeper://127.0.0.1:1?secret=none", "session_timeout");
  AddSeconds(&rows, "zookeeper://127.0.0.1:1?secret=none", "connect_timeout", 3600);
  rows.push_back({"zookeeper://127.0.0.1:1?secret=none&session_timeout=0", kUsage,
                  "session_timeout"});
  rows.push_back({"zookeeper://127.0.0.1:1?secret=none&session_timeout=1e9", kUsage,
                  "session_timeout"});
  AddChoice(&rows, base, "format");
  AddNaming(&rows, "zookeeper://127.0.0.1:1?connect_timeout=1");
  AddUnknown(&rows, base);
  for (const char* path : {"//a//b", "/a/", "/a//b", "/zookeeper", "/a/./b", "/a/../b"}) {
    rows.push_back({absl::StrCat("zookeeper://127.0.0.1:1", path,
                                 "?secret=none&connect_timeout=1"),
                    kUsage, "path"});
  }
  rows.push_back({"zookeeper://127.0.0.1:1/?secret=none", kUsage, "root"});
  for (const char* servers : {"[::1]:2181,[::1]:2182", "h1:1,[::1]:2", "h1:1,,h2:2",
                              "h1:99999,h2:1", "a%2Fb:1", "a%20b:1"}) {
    rows.push_back({absl::StrCat("zookeeper://", servers, "?secret=none"), kUsage, "server"});
  }
  rows.push_back({"zookeeper://h1:0?secret=none", kUsage, "port"});
  // An encoded ',' is a ',': two well-formed names, which do not resolve.
  rows.push_back({"zookeeper://no-such-host.invalid%2Cb.invalid:1?secret=none", kUnreachable,
                  "no-such-host.invalid"});
  rows.push_back({"zookeeper://u:p@127.0.0.1:1?secret=none", kUsage, "authentication"});
  rows.push_back({base + "&format=symfony", kUsage, "shared", {"-s"}});
  rows.push_back({base, kUsage, "counting", {"--permits", "2"}});
  rows.push_back({base, kUnreachable, "127.0.0.1:1"});
  RunRows(rows);
}

// Nothing listens on port 1; the TLS options' files are checked before any
// connection, and before mbedTLS reads them.
void Etcd(void**) {
  const Files& f = Fixtures();
  const std::string base = "etcd://127.0.0.1:1?connect_timeout=0.5&timeout=0.5";
  const std::string tls = "etcds://127.0.0.1:1?connect_timeout=0.5";
  std::vector<Row> rows;
  AddNumber(&rows, base, "ttl", 1, 31536000);
  AddSeconds(&rows, "etcd://127.0.0.1:1", "connect_timeout", 3600);
  AddSeconds(&rows, "etcd://127.0.0.1:1", "timeout", 3600);
  rows.push_back({"etcd://127.0.0.1:1?timeout=0", kUsage, "timeout"});
  AddUnknown(&rows, base);
  // etcds:// where this build has mbedTLS's TLS (Unimplemented, 69, where not).
  if (!absl::IsUnimplemented(ipclock::CheckDsn(tls).status())) {
    AddBool(&rows, tls, "insecure_skip_tls_verify");
    AddFileOption(&rows, tls, "cacert", /*must_exist=*/true);
    AddFileOption(&rows, With(tls, "key=" + f.regular), "cert", /*must_exist=*/true);
    AddFileOption(&rows, With(tls, "cert=" + f.regular), "key", /*must_exist=*/true);
    rows.push_back({With(tls, "cert=" + f.regular), kUsage, "key="});
    rows.push_back({tls + "&insecure_skip_tls_verify=true", kUnreachable, "127.0.0.1:1"});
  }
  for (const char* name : {"cacert", "cert", "key", "insecure_skip_tls_verify"}) {
    rows.push_back({With(base, absl::StrCat(name, "=", f.regular)), kUsage, name});
  }
  for (const char* servers : {"[::1]:2379,[::1]:2380", "h1:1,,h2:2", "h1:99999,h2:1"}) {
    rows.push_back({absl::StrCat("etcd://", servers), kUsage, "server"});
  }
  rows.push_back({"etcd://h1:0", kUsage, "port"});
  for (const char* host : {"a%2Fb", "a%20b"}) {
    rows.push_back({absl::StrCat("etcd://", host, ":1"), kUsage, "host name"});
  }
  rows.push_back({"etcd://u:p@127.0.0.1:1", kUsage, "user:password"});
  rows.push_back({"etcd:", kUsage, "expected"});
  rows.push_back({base, kUsage, "counting", {"--permits", "2"}});
  rows.push_back({base, kUnreachable, "127.0.0.1:1"});
  RunRows(rows);
}

// The other side of the table: good values of every option pass each
// store's DSN check (CheckDsn(), nothing connected), so that the check
// refuses what is bad and not what it does not know of.
void GoodValuesPassTheChecks(void**) {
  const Files& f = Fixtures();
  const std::string dir = MakeTempDir();
  std::vector<std::string> failures;
  for (const std::string& dsn : {
           "flock://" + dir + "?fair=true&record=false&metrics=off",
           absl::StrCat("shm://", UniqueShmName("good"), "?fair=true&metrics=every"),
           std::string("posix-semaphore?fair=true&metrics=on"),
           std::string("semaphore?fair=false&metrics=0"),
           "in-memory?metrics=off&fallback=flock%3A%2F%2F" + dir + "%3Fmetrics%3Doff",
           std::string("combined:?store1=in-memory%3Fmetrics%3Doff&store2=in-memory&metrics=every"),
           std::string("redis://127.0.0.1:1?tracking=false&secret=none&metrics=off"),
           "redis://127.0.0.1:1?fallback=flock%3A%2F%2F" + dir + "%3Fmetrics%3Devery&metrics=off",
           std::string("memcached://127.0.0.1:1?record=false&secret=none&metrics=off"),
           std::string("mysql+advisory://u:p@127.0.0.1:1/db?scheme=symfony&metrics=off"),
           std::string("postgresql+advisory://u:p@127.0.0.1:1/db?metrics=every"),
           std::string("zookeeper://127.0.0.1:1?secret=none&metrics=off"),
           std::string("etcd://127.0.0.1:1/p?ttl=5&timeout=1&connect_timeout=1&metrics=off"),
           absl::StrCat("etcds://127.0.0.1:1?insecure_skip_tls_verify=true&cacert=", f.regular,
                        "&cert=", f.regular, "&key=", f.regular),
       }) {
    absl::StatusOr<ipclock::StoreInfo> info = ipclock::FindStore(dsn);
    if (info.ok() && !info->built) continue;
    absl::StatusOr<ipclock::Capabilities> caps = ipclock::CheckDsn(dsn);
    // etcds:// in a build without mbedTLS's TLS.
    if (absl::IsUnimplemented(caps.status()) && absl::StartsWith(dsn, "etcds:")) continue;
    if (!caps.ok()) failures.push_back(absl::StrCat(dsn, ": ", caps.status().ToString()));
  }
  if (!failures.empty()) {
    fail_msg("refused by their checks:\n%s", absl::StrJoin(failures, "\n").c_str());
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(Flock),
      cmocka_unit_test(Shm),
      cmocka_unit_test(Semaphores),
      cmocka_unit_test(InMemoryCombinedDegraded),
      cmocka_unit_test(Redis),
      cmocka_unit_test(Postgres),
      cmocka_unit_test(Mysql),
      cmocka_unit_test(Sqlite),
      cmocka_unit_test(Memcached),
      cmocka_unit_test(ZooKeeper),
      cmocka_unit_test(Etcd),
      cmocka_unit_test(GoodValuesPassTheChecks),
  };
  return cmocka_run_group_tests_name("dsn_fault_table", tests, nullptr, nullptr);
}
