// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Redis store against real servers:
//
//   * $IPCLOCK_TEST_REDIS (and _AUTH, with requirepass), which
//     tools/test-servers/redis.sh starts: both formats' layouts on the server,
//     expiry on the server clock, refresh, a serialized key released from
//     another process, fencing, owner death after SIGKILL, the "string type
//     = conflict" rule, AUTH and SELECT, and PHP's Symfony RedisStore as a
//     peer (tests/php/redis_peer.php).
//   * a server this test starts itself (first free port from
//     $IPCLOCK_TEST_PORT_BASE + 90), for
//     what would disturb the shared ones: counting round trips, SCRIPT
//     FLUSH, ACL users, a Unix socket, fixed key names, and killing the
//     server while a lock is held and while a waiter waits.
//
// Without $IPCLOCK_TEST_REDIS (or redis-server for the own server) the tests
// are skipped, saying why, unless CI=true: then they fail. The PHP tests are
// skipped without php/php-redis/Symfony Lock, unless --require-php.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"  // hiredis's sds.h (C flexible arrays)
#include <hiredis.h>
#pragma GCC diagnostic pop

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "core/dsn.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/store_interface.h"
#include "ipclock/redis_store.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::LockMode;
using ipclock::LockOptions;
using ipclock::Store;

bool g_require_php = false;

// Vectors from tests/key_naming_test.cc (openssl / python3 hashlib).
constexpr char kSecret[] = "0123456789abcdef";
constexpr char kHmacInvoice[] =
    "592acdb0caa32af555a25a5adea7aafea58f3635e21b62900d0c461a8fa3d782";
constexpr char kShaInvoice[] =
    "3c304bc21c84147600a54c27b7bccab936b33065bc7ea051a1a9af00e3378ff3";

bool UnderCi() {
  const char* ci = getenv("CI");
  return ci != nullptr && strcmp(ci, "true") == 0;
}

// $name, or skip (fail under CI=true). Call before making any object: skip()
// longjmps past destructors.
const char* RequireEnv(const char* name) {
  const char* v = getenv(name);
  if (v != nullptr && v[0] != '\0') return v;
  if (UnderCi()) fail_msg("$%s is not set under CI=true: the test Redis did not start", name);
  print_message("skipped: $%s is not set (tools/dev test starts the test Redis servers)\n", name);
  skip();
  return nullptr;
}

// Appends query options to a DSN that may already have some.
std::string With(absl::string_view dsn, absl::string_view options) {
  return absl::StrCat(dsn, absl::StrContains(dsn, '?') ? "&" : "?", options);
}

std::shared_ptr<Store> StoreOrDie(const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) fail_msg("StoreFromDsn(%s): %s", dsn.c_str(), store.status().ToString().c_str());
  return *store;
}

Lock MakeLock(const std::shared_ptr<Store>& store, const std::string& resource,
              absl::Duration ttl = absl::Seconds(30)) {
  LockOptions options;
  options.ttl = ttl;
  absl::StatusOr<Lock> lock = Lock::Create(store, resource, options);
  if (!lock.ok()) fail_msg("Lock::Create: %s", lock.status().ToString().c_str());
  return *std::move(lock);
}

bool Try(Lock& lock, LockMode mode = LockMode::kExclusive) {
  absl::StatusOr<bool> got = lock.TryAcquire(mode);
  if (!got.ok()) fail_msg("TryAcquire: %s", got.status().ToString().c_str());
  return *got;
}

bool Held(Lock& lock) {
  return ipclock_test::IsStillHeld(lock);
}

std::string TokenOf(Lock& lock) {
  absl::StatusOr<absl::string_view> t = ipclock::internal::LockAccess::key(lock).Token();
  if (!t.ok()) fail_msg("Token: %s", t.status().ToString().c_str());
  return std::string(*t);
}

bool Contains(const absl::Status& s, absl::string_view what) {
  return absl::StrContains(s.ToString(), what);
}

// --- A plain Redis client, to look at what the store wrote --------------------------

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

class Raw {
 public:
  // redis://[[user]:password@]host:port[/db] or redis:///socket
  explicit Raw(const std::string& dsn_text) {
    absl::StatusOr<ipclock::Dsn> dsn = ipclock::Dsn::Parse(dsn_text);
    if (!dsn.ok()) fail_msg("Raw: %s", dsn.status().ToString().c_str());
    struct timeval tv = {5, 0};
    c_ = dsn->host().empty()
             ? redisConnectUnixWithTimeout(dsn->path().c_str(), tv)
             : redisConnectWithTimeout(dsn->host().c_str(), dsn->port() ? dsn->port() : 6379, tv);
    if (c_ == nullptr || c_->err) fail_msg("Raw: cannot connect to %s", dsn->redacted().c_str());
    redisSetTimeout(c_, tv);
    std::string password = dsn->has_password() ? dsn->password() : dsn->user();
    if (!password.empty()) Ok({"AUTH", password});
    if (!dsn->host().empty() && dsn->path().size() > 1) Ok({"SELECT", dsn->path().substr(1)});
  }
  ~Raw() {
    if (c_ != nullptr) redisFree(c_);
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  Reply Cmd(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    void* r = redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data());
    if (r == nullptr) fail_msg("Raw %s: %s", args[0].c_str(), c_->errstr);
    return Reply(static_cast<redisReply*>(r));
  }
  // A string or status reply; nullopt for nil. Fails on anything else.
  std::optional<std::string> Str(const std::vector<std::string>& args) {
    Reply r = Cmd(args);
    if (r->type == REDIS_REPLY_NIL) return std::nullopt;
    if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) {
      fail_msg("Raw %s: not a string reply (type %d: %s)", args[0].c_str(), r->type,
               r->str != nullptr ? r->str : "");
    }
    return std::string(r->str, r->len);
  }
  long long Int(const std::vector<std::string>& args) {
    Reply r = Cmd(args);
    if (r->type != REDIS_REPLY_INTEGER) {
      fail_msg("Raw %s: not an integer reply (type %d: %s)", args[0].c_str(), r->type,
               r->str != nullptr ? r->str : "");
    }
    return r->integer;
  }
  void Ok(const std::vector<std::string>& args) {
    Reply r = Cmd(args);
    if (r->type == REDIS_REPLY_ERROR) fail_msg("Raw %s: %s", args[0].c_str(), r->str);
  }
  long long ServerMillis() {
    Reply r = Cmd({"TIME"});
    long long s = 0, us = 0;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        !absl::SimpleAtoi(r->element[0]->str, &s) || !absl::SimpleAtoi(r->element[1]->str, &us)) {
      fail_msg("Raw TIME: bad reply");
    }
    return s * 1000 + us / 1000;
  }
  // A field of INFO, e.g. "total_commands_processed".
  long long Info(const std::string& section, const std::string& field) {
    std::optional<std::string> text = Str({"INFO", section});
    for (absl::string_view line : absl::StrSplit(*text, "\r\n")) {
      if (absl::ConsumePrefix(&line, field + ":")) {
        long long v = 0;
        // commandstats lines look like "calls=3,usec=..."
        absl::ConsumePrefix(&line, "calls=");
        line = line.substr(0, line.find(','));
        if (absl::SimpleAtoi(line, &v)) return v;
      }
    }
    return 0;
  }

 private:
  redisContext* c_ = nullptr;
};

long long AsMillis(const std::optional<std::string>& s) {
  long long v = 0;
  if (!s || !absl::SimpleAtoi(*s, &v)) fail_msg("not a number: %s", s ? s->c_str() : "(nil)");
  return v;
}

// --- A server of our own, to kill, flush and count on ---------------------------------

class OwnServer {
 public:
  ~OwnServer() { Kill(); }

  // Why it cannot run (nullptr if it runs). Starts on first use.
  const char* Start() {
    if (pid_ > 0) return nullptr;
    if (FindInPath("redis-server").empty()) {
      return "redis-server is not installed (apt-get install redis-server)";
    }
    if (dir_.empty()) dir_ = MakeTempDir();
    if (port_ == 0) {
      for (int p = PortBase(); p < PortLimit() && port_ == 0; ++p) {
        if (!Listening(p)) port_ = p;
      }
      if (port_ == 0) return "no free port in $IPCLOCK_TEST_PORT_BASE+90..98 for a test redis-server";
    }
    Launch();
    return nullptr;
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    WaitPlain(pid_, 10);
    pid_ = -1;
  }

  void Restart() {
    Kill();
    Launch();
  }

  int port() const { return port_; }
  std::string socket() const { return absl::StrCat(dir_, "/redis.sock"); }
  std::string dsn() const { return absl::StrCat("redis://127.0.0.1:", port_); }
  std::string server() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  // The ports tools/test-servers/ports.sh leaves to tests' own servers.
  static int PortBase() {
    const char* base = getenv("IPCLOCK_TEST_PORT_BASE");
    int b = 0;
    if (base == nullptr || !absl::SimpleAtoi(base, &b) || b <= 0) b = 21300;
    return b + 90;
  }
  static int PortLimit() { return PortBase() + 9; }

  static bool Listening(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool up = connect(fd, reinterpret_cast<struct sockaddr*>(&a), sizeof(a)) == 0;
    close(fd);
    return up;
  }

  void Launch() {
    const std::string port = absl::StrCat(port_);
    const std::string sock = socket();
    const std::string log = absl::StrCat(dir_, "/redis.log");
    std::vector<std::string> args = {"redis-server", "--port", port, "--bind", "127.0.0.1",
                                     "--save", "", "--appendonly", "no", "--dir", dir_,
                                     "--unixsocket", sock, "--unixsocketperm", "700",
                                     "--daemonize", "no", "--logfile", log,
                                     "--enable-debug-command", "local"};
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
      // The server dies with the test, however the test ends.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      _exit(127);
    }
    pid_ = pid;
    const double until = NowSeconds() + 10;
    while (NowSeconds() < until) {
      // Another program can take the port between our probe and the
      // server's bind: the server then exits at once, and the next port is
      // tried.
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        if (port_ + 1 >= PortLimit()) break;
        ++port_;
        Launch();
        return;
      }
      redisContext* c = redisConnect("127.0.0.1", port_);
      if (c != nullptr && c->err == 0) {
        void* r = redisCommand(c, "PING");
        const bool pong = r != nullptr && static_cast<redisReply*>(r)->type == REDIS_REPLY_STATUS;
        if (r != nullptr) freeReplyObject(r);
        redisFree(c);
        if (pong) return;
      } else if (c != nullptr) {
        redisFree(c);
      }
      usleep(20 * 1000);
    }
    fail_msg("redis-server on port %d did not answer PING within 10 s (log: %s)", port_,
             ReadFileOrEmpty(log).c_str());
  }

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

OwnServer* g_own = nullptr;

// Our own server, started; skips (fails under CI=true) without redis-server.
OwnServer& Own() {
  if (g_own == nullptr) g_own = new OwnServer();
  if (const char* why = g_own->Start(); why != nullptr) {
    if (UnderCi()) fail_msg("%s", why);
    print_message("skipped: %s\n", why);
    skip();
  }
  return *g_own;
}

const char* const kFormats[] = {"symfony", "simple"};

// --- DSNs and creation ------------------------------------------------------------------

void DsnErrors(void**) {
  struct Case {
    const char* dsn;
    absl::StatusCode code;
  };
  const std::string secret_dir = MakeTempDir();
  const Case cases[] = {
      {"redis://127.0.0.1:1?format=json", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1?fencing=maybe", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1?connect_timeout=-1", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1?command_timeout=soon", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1/2?db=3", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1/two", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1?colour=blue", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1?naming=parse-lock&format=symfony", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1?naming=parse-lock&prefix=x", absl::StatusCode::kInvalidArgument},
      {"redis://127.0.0.1:1?secret=short", absl::StatusCode::kInvalidArgument},
      {"redis:", absl::StatusCode::kInvalidArgument},
      {"redis://", absl::StatusCode::kInvalidArgument},
      {"rediss://127.0.0.1:1", absl::StatusCode::kUnimplemented},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(c.dsn);
    if (s.status().code() != c.code) {
      fail_msg("%s: expected %s, got %s", c.dsn, absl::StatusCodeToString(c.code).c_str(),
               s.status().ToString().c_str());
    }
  }
  // A missing secret file is named; a secret never is.
  absl::StatusOr<std::shared_ptr<Store>> s =
      ipclock::StoreFromDsn(absl::StrCat("redis://127.0.0.1:1?secret_file=", secret_dir, "/nope"));
  ASSERT_CODE(s, absl::StatusCode::kNotFound);
  assert_true(Contains(s.status(), absl::StrCat(secret_dir, "/nope")));
  s = ipclock::StoreFromDsn("redis://127.0.0.1:1?secret=fifteen-bytes!!");
  assert_false(Contains(s.status(), "fifteen-bytes"));
  // NewRedisStore checks its options too.
  ipclock::RedisStoreOptions o;
  o.port = 0;
  ASSERT_CODE(ipclock::NewRedisStore(o), absl::StatusCode::kInvalidArgument);
  o = ipclock::RedisStoreOptions();
  o.user = "alice";
  ASSERT_CODE(ipclock::NewRedisStore(o), absl::StatusCode::kInvalidArgument);
}

int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<struct sockaddr*>(&a), &len) != 0) {
    fail_msg("bind: %s", strerror(errno));
  }
  close(fd);  // bound, never listened, now closed: connections are refused
  return ntohs(a.sin_port);
}

void ServerDownAtCreation(void**) {
  const int port = ClosedPort();
  const std::string server = absl::StrCat("127.0.0.1:", port);
  absl::StatusOr<std::shared_ptr<Store>> s =
      ipclock::StoreFromDsn(absl::StrCat("redis://", server, "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kUnavailable);
  assert_true(Contains(s.status(), server));
  print_message("%s\n", s.status().ToString().c_str());
  // With a password in the DSN: never in the message.
  for (const char* form : {"redis://:hunter2hunter2@", "redis://hunter2hunter2@",
                           "redis://alice:hunter2hunter2@"}) {
    s = ipclock::StoreFromDsn(absl::StrCat(form, server));
    ASSERT_CODE(s, absl::StatusCode::kUnavailable);
    assert_true(Contains(s.status(), server));
    assert_false(Contains(s.status(), "hunter2"));
  }
  s = ipclock::StoreFromDsn("redis:///nonexistent/ipclock/redis.sock?secret=none");
  ASSERT_CODE(s, absl::StatusCode::kUnavailable);
  assert_true(Contains(s.status(), "/nonexistent/ipclock/redis.sock"));
}

// --- Formats on the server -----------------------------------------------------------

void SymfonyLayout(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  auto store = StoreOrDie(With(base, "format=symfony&secret=none"));
  assert_true(store->capabilities().shared);
  assert_true(store->capabilities().serializable);
  assert_true(store->capabilities().scope == ipclock::Scope::kRemote);
  assert_false(store->capabilities().blocking);
  Raw raw(base);
  const std::string r = UniqueResource("sf-layout");
  Lock lock = MakeLock(store, r, absl::Seconds(10));
  const long long before = raw.ServerMillis();
  assert_true(Try(lock));
  const long long after = raw.ServerMillis();
  const std::string token = TokenOf(lock);
  assert_int_equal(token.size(), 44);
  assert_string_equal(raw.Str({"TYPE", r})->c_str(), "zset");
  assert_int_equal(raw.Int({"ZCARD", r}), 2);
  // Scores are expiries in ms on the server's clock: TIME + ttl.
  const long long score = AsMillis(raw.Str({"ZSCORE", r, token}));
  assert_int_equal(AsMillis(raw.Str({"ZSCORE", r, "__write__"})), score);
  if (score < before + 10000 || score > after + 10000) {
    fail_msg("score %lld not in server time + ttl [%lld, %lld]", score, before + 10000, after + 10000);
  }
  assert_int_equal(raw.Int({"PEXPIRETIME", r}), score);
  // The companion hash: fence and holder marker.
  const std::string meta = r + ":ipclock";
  assert_string_equal(raw.Str({"HGET", meta, "holder"})->c_str(), token.c_str());
  assert_true(lock.fence().has_value());
  assert_int_equal(AsMillis(raw.Str({"HGET", meta, "fence"})), *lock.fence());
  ASSERT_OK(lock.Release());
  assert_int_equal(raw.Int({"EXISTS", r}), 0);
  assert_int_equal(raw.Int({"HEXISTS", meta, "holder"}), 0);
  assert_int_equal(AsMillis(raw.Str({"HGET", meta, "fence"})), *lock.fence());

  // Readers: one member each, no __write__, the key lives as long as the
  // longest lease.
  Lock a = MakeLock(store, r, absl::Seconds(5)), b = MakeLock(store, r, absl::Seconds(20));
  assert_true(Try(a, LockMode::kShared));
  assert_true(Try(b, LockMode::kShared));
  assert_false(a.fence().has_value());
  assert_int_equal(raw.Int({"ZCARD", r}), 2);
  assert_false(raw.Str({"ZSCORE", r, "__write__"}).has_value());
  assert_int_equal(raw.Int({"PEXPIRETIME", r}), AsMillis(raw.Str({"ZSCORE", r, TokenOf(b)})));
  ASSERT_OK(b.Release());
  assert_int_equal(raw.Int({"PEXPIRETIME", r}), AsMillis(raw.Str({"ZSCORE", r, TokenOf(a)})));
}

void SimpleLayout(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  auto store = StoreOrDie(With(base, "format=simple&secret=none"));
  assert_false(store->capabilities().shared);
  assert_true(store->capabilities().fencing);
  Raw raw(base);
  const std::string r = UniqueResource("simple-layout");
  Lock lock = MakeLock(store, r, absl::Seconds(10));
  assert_true(Try(lock));
  assert_string_equal(raw.Str({"TYPE", r})->c_str(), "string");
  assert_string_equal(raw.Str({"GET", r})->c_str(), TokenOf(lock).c_str());
  const long long pttl = raw.Int({"PTTL", r});
  assert_true(pttl > 9000 && pttl <= 10000);
  assert_string_equal(raw.Str({"HGET", r + ":ipclock", "holder"})->c_str(), TokenOf(lock).c_str());
  // Saving again is idempotent: same token, same fence.
  const uint64_t fence = *lock.fence();
  assert_true(Try(lock));
  assert_int_equal(*lock.fence(), fence);
  ASSERT_OK(lock.Release());
  assert_int_equal(raw.Int({"EXISTS", r}), 0);
  // No shared locks in this format.
  Lock reader = MakeLock(store, r);
  ASSERT_CODE(reader.TryAcquire(LockMode::kShared), absl::StatusCode::kFailedPrecondition);
  ASSERT_CODE(ipclock::StoreCalls::Save(*store, ipclock::internal::LockAccess::key(reader), LockMode::kShared, ipclock::Deadline::Past()),
              absl::StatusCode::kFailedPrecondition);
}

void ExpiryOnServerClock(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  Raw raw(base);
  for (const char* format : kFormats) {
    auto store = StoreOrDie(With(base, absl::StrCat("format=", format, "&secret=none")));
    const std::string r = UniqueResource(absl::StrCat("expiry-", format));
    Lock lock = MakeLock(store, r, absl::Milliseconds(300));
    assert_true(Try(lock));
    assert_int_equal(raw.Int({"EXISTS", r}), 1);
    const long long pttl = raw.Int({"PTTL", r});
    assert_true(pttl > 0 && pttl <= 300);
    absl::SleepFor(absl::Milliseconds(600));
    // Gone on the server by itself: no client touched it.
    assert_int_equal(raw.Int({"EXISTS", r}), 0);
    assert_true(lock.IsExpired());
    assert_false(Held(lock));
    ASSERT_OK(lock.Release());
  }
}

void InfiniteTtlRefused(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  auto store = StoreOrDie(With(base, "secret=none"));
  Lock lock = MakeLock(store, UniqueResource("forever"), absl::InfiniteDuration());
  ASSERT_CODE(lock.TryAcquire(), absl::StatusCode::kInvalidArgument);
}

void Refresh(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  Raw raw(base);
  for (const char* format : kFormats) {
    auto store = StoreOrDie(With(base, absl::StrCat("format=", format, "&secret=none")));
    const std::string r = UniqueResource(absl::StrCat("refresh-", format));
    Lock lock = MakeLock(store, r, absl::Seconds(1));
    assert_true(Try(lock));
    ASSERT_OK(lock.Refresh(absl::Seconds(20)));
    assert_true(raw.Int({"PTTL", r}) > 15000);
    assert_true(lock.RemainingLifetime() > absl::Seconds(15));
    if (std::string(format) == "symfony") {
      assert_true(AsMillis(raw.Str({"ZSCORE", r, "__write__"})) > raw.ServerMillis() + 15000);
    }
    absl::SleepFor(absl::Milliseconds(1200));  // past the first TTL
    assert_true(Held(lock));
    // Someone removed it: refreshing says the lock is gone.
    raw.Ok({"DEL", r});
    ASSERT_CODE(lock.Refresh(absl::Seconds(20)), absl::StatusCode::kAborted);
    assert_false(Held(lock));
  }
}

void LeaseCountsFromAcquisition(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  for (const char* format : kFormats) {
    auto store = StoreOrDie(With(base, absl::StrCat("format=", format, "&secret=none")));
    const std::string r = UniqueResource("lease");
    Lock holder = MakeLock(store, r, absl::Seconds(10));
    assert_true(Try(holder));
    std::thread releaser([&] {
      absl::SleepFor(absl::Milliseconds(800));
      holder.Release().IgnoreError();
    });
    // Waits longer than its own TTL and still gets a full lease.
    Lock waiter = MakeLock(store, r, absl::Milliseconds(500));
    absl::Status s = waiter.Acquire(absl::Seconds(5));
    releaser.join();
    ASSERT_OK(s);
    assert_true(waiter.RemainingLifetime() > absl::Milliseconds(300));
    assert_true(Held(waiter));
  }
}

void SerializedKeyReleasedByAnotherProcess(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  Raw raw(base);
  for (const char* format : kFormats) {
    const std::string dsn = With(base, absl::StrCat("format=", format, "&secret=none"));
    auto store = StoreOrDie(dsn);
    const std::string r = UniqueResource(absl::StrCat("serial-", format));
    Lock lock = MakeLock(store, r, absl::Seconds(5));
    assert_true(Try(lock));
    absl::StatusOr<std::string> text = lock.Serialize();
    ASSERT_OK(text);
    const std::string serialized = *text;
    pid_t child = ForkChild([&] {
      // Another process with its own connection and nothing but the text.
      absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(dsn);
      if (!s.ok()) return 2;
      absl::StatusOr<Lock> adopted = Lock::FromSerialized(*s, serialized);
      if (!adopted.ok()) return 3;
      if (!adopted->CheckAcquired().ok()) return 4;
      if (!adopted->Refresh(absl::Seconds(30)).ok()) return 5;
      if (!adopted->Release().ok()) return 6;
      return 0;
    });
    assert_int_equal(WaitChild(child), 0);
    assert_int_equal(raw.Int({"EXISTS", r}), 0);
    assert_false(Held(lock));
    Lock next = MakeLock(store, r);
    assert_true(Try(next));
  }
}

void FencingGrows(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  Raw raw(base);
  for (const char* format : kFormats) {
    auto store = StoreOrDie(With(base, absl::StrCat("format=", format, "&secret=none")));
    assert_true(store->capabilities().fencing);
    assert_true(store->capabilities().owner_death);
    const std::string r = UniqueResource(absl::StrCat("fence-", format));
    uint64_t last = 0;
    for (int i = 0; i < 3; ++i) {
      Lock lock = MakeLock(store, r);
      assert_true(Try(lock));
      assert_true(lock.fence().has_value());
      assert_true(*lock.fence() == last + 1 || (i == 0 && *lock.fence() >= 1));
      assert_int_equal(AsMillis(raw.Str({"HGET", r + ":ipclock", "fence"})), *lock.fence());
      last = *lock.fence();
    }
    // fencing=false: no companion key, no tokens, no owner-death reports.
    auto plain = StoreOrDie(With(base, absl::StrCat("format=", format, "&secret=none&fencing=false")));
    assert_false(plain->capabilities().fencing);
    assert_false(plain->capabilities().owner_death);
    const std::string r2 = UniqueResource("nofence");
    Lock lock = MakeLock(plain, r2);
    assert_true(Try(lock));
    assert_false(lock.fence().has_value());
    assert_int_equal(raw.Int({"EXISTS", r2 + ":ipclock"}), 0);
  }
}

// A child takes `r` with a short lease and is SIGKILLed holding it.
void KillHolder(const std::string& dsn, const std::string& r, LockMode mode) {
  Signal locked;
  pid_t child = ForkChild([&] {
    absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(dsn);
    if (!s.ok()) return 2;
    LockOptions options;
    options.ttl = absl::Milliseconds(500);
    absl::StatusOr<Lock> lock = Lock::Create(*s, r, options);
    if (!lock.ok() || !lock->TryAcquire(mode).value_or(false)) return 3;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  kill(child, SIGKILL);
  assert_int_equal(WaitChild(child), 128 + SIGKILL);
}

void OwnerDeathAfterSigkill(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  for (const char* format : kFormats) {
    const std::string dsn = With(base, absl::StrCat("format=", format, "&secret=none"));
    auto store = StoreOrDie(dsn);
    const std::string r = UniqueResource(absl::StrCat("death-", format));
    KillHolder(dsn, r, LockMode::kExclusive);
    Lock next = MakeLock(store, r);
    assert_false(Try(next));  // the lease still runs
    ASSERT_OK(next.Acquire(absl::Seconds(5)));
    assert_true(next.previous_owner_died());
    ASSERT_OK(next.Release());
    Lock after = MakeLock(store, r);
    assert_true(Try(after));
    assert_false(after.previous_owner_died());  // a clean release clears it
    ASSERT_OK(after.Release());

    // A holder whose lease ran out but who then released is not dead.
    Lock slow = MakeLock(store, r, absl::Milliseconds(200));
    assert_true(Try(slow));
    absl::SleepFor(absl::Milliseconds(400));
    // Released (Lock may report the overrun as Aborted: include/ipclock/lease_overrun.h).
    absl::Status late = slow.Release();
    if (!late.ok() && late.code() != absl::StatusCode::kAborted) {
      fail_msg("late release: %s", late.ToString().c_str());
    }
    Lock again = MakeLock(store, r);
    assert_true(Try(again));
    assert_false(again.previous_owner_died());
  }
  // Symfony format: readers see a dead writer too; the next writer clears it.
  const std::string dsn = With(base, "format=symfony&secret=none");
  auto store = StoreOrDie(dsn);
  const std::string r = UniqueResource("death-readers");
  KillHolder(dsn, r, LockMode::kExclusive);
  Lock reader = MakeLock(store, r);
  ASSERT_OK(reader.Acquire(absl::Seconds(5), LockMode::kShared));
  assert_true(reader.previous_owner_died());
  ASSERT_OK(reader.Release());
  Lock writer = MakeLock(store, r);
  assert_true(Try(writer));
  assert_true(writer.previous_owner_died());
  ASSERT_OK(writer.Release());
  Lock writer2 = MakeLock(store, r);
  assert_true(Try(writer2));
  assert_false(writer2.previous_owner_died());
  // A dead reader is not reported: only writers leave a marker.
  ASSERT_OK(writer2.Release());
  KillHolder(dsn, r, LockMode::kShared);
  Lock writer3 = MakeLock(store, r);
  ASSERT_OK(writer3.Acquire(absl::Seconds(5)));
  assert_false(writer3.previous_owner_died());
}

void StringTypeIsConflict(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  Raw raw(base);
  auto symfony = StoreOrDie(With(base, "format=symfony&secret=none"));
  auto simple = StoreOrDie(With(base, "format=simple&secret=none"));
  // A pre-5.2 Symfony lock (a plain string) is a conflict, in both modes,
  // and is left alone.
  const std::string r = UniqueResource("legacy");
  raw.Ok({"SET", r, "legacy-token", "PX", "30000"});
  Lock lock = MakeLock(symfony, r);
  assert_false(Try(lock));
  assert_false(Try(lock, LockMode::kShared));
  assert_false(Held(lock));
  ASSERT_OK(lock.Release());
  ASSERT_CODE(lock.Refresh(), absl::StatusCode::kFailedPrecondition);
  assert_string_equal(raw.Str({"GET", r})->c_str(), "legacy-token");
  // So the two formats exclude each other on one resource, both ways.
  const std::string r2 = UniqueResource("mixed");
  Lock sf = MakeLock(symfony, r2), sp = MakeLock(simple, r2);
  assert_true(Try(sf));
  assert_false(Try(sp));
  assert_false(Held(sp));
  assert_string_equal(raw.Str({"TYPE", r2})->c_str(), "zset");
  assert_true(Held(sf));
  ASSERT_OK(sf.Release());
  assert_true(Try(sp));
  assert_false(Try(sf));
  assert_false(Try(sf, LockMode::kShared));
  assert_true(Held(sp));
}

void SelectDb(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  if (absl::StrContains(base, '?')) skip();  // a DSN with its own query: not ours to edit
  auto store = StoreOrDie(absl::StrCat(base, "/3?secret=none"));
  assert_true(absl::StrContains(store->Describe(), "/3"));
  const std::string r = UniqueResource("select");
  Lock lock = MakeLock(store, r);
  assert_true(Try(lock));
  Raw db3(absl::StrCat(base, "/3"));
  Raw db0(base);
  assert_int_equal(db3.Int({"EXISTS", r}), 1);
  assert_int_equal(db0.Int({"EXISTS", r}), 0);
  absl::StatusOr<std::shared_ptr<Store>> bad = ipclock::StoreFromDsn(absl::StrCat(base, "/99999?secret=none"));
  ASSERT_CODE(bad, absl::StatusCode::kInvalidArgument);
  assert_true(Contains(bad.status(), "SELECT 99999"));
}

void Auth(void**) {
  const char* auth = RequireEnv("IPCLOCK_TEST_REDIS_AUTH");
  absl::StatusOr<ipclock::Dsn> parsed = ipclock::Dsn::Parse(auth);
  ASSERT_OK(parsed);
  const std::string password = parsed->password();
  const std::string server = absl::StrCat(parsed->host(), ":", parsed->port());
  assert_false(password.empty());
  {
    auto store = StoreOrDie(With(auth, "secret=none"));
    assert_false(absl::StrContains(store->Describe(), password));
    Lock lock = MakeLock(store, UniqueResource("auth"));
    assert_true(Try(lock));
  }
  // Symfony's form: the password alone before '@'.
  StoreOrDie(absl::StrCat("redis://", password, "@", server, "?secret=none"));
  // A wrong password: PermissionDenied, naming the server, no password.
  const std::string wrong = "wrong-password-1234";
  absl::StatusOr<std::shared_ptr<Store>> s =
      ipclock::StoreFromDsn(absl::StrCat("redis://:", wrong, "@", server, "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  print_message("%s\n", s.status().ToString().c_str());
  assert_true(Contains(s.status(), server));
  assert_false(Contains(s.status(), wrong));
  assert_false(Contains(s.status(), password));
  // None at all: PermissionDenied saying that one is needed.
  s = ipclock::StoreFromDsn(absl::StrCat("redis://", server, "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  assert_true(Contains(s.status(), "NOAUTH"));
}

void AclUser(void**) {
  OwnServer& own = Own();
  Raw admin(own.dsn());
  admin.Ok({"ACL", "SETUSER", "locker", "reset", "on", ">locker-pass-1234", "~*", "&*", "+@all"});
  {
    auto store = StoreOrDie(absl::StrCat("redis://locker:locker-pass-1234@", own.server(), "?secret=none"));
    assert_true(absl::StrContains(store->Describe(), "locker@"));
    Lock lock = MakeLock(store, UniqueResource("acl"));
    assert_true(Try(lock));
    ASSERT_OK(lock.Release());
  }
  absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(
      absl::StrCat("redis://locker:not-the-pass-9876@", own.server(), "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  assert_false(Contains(s.status(), "not-the-pass"));
  // A user without EVALSHA: refused when the scripts load, at creation.
  admin.Ok({"ACL", "SETUSER", "reader", "reset", "on", ">reader-pass-1234", "~*", "+@read"});
  s = ipclock::StoreFromDsn(absl::StrCat("redis://reader:reader-pass-1234@", own.server(), "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  assert_false(Contains(s.status(), "reader-pass"));
  admin.Ok({"ACL", "DELUSER", "locker", "reader"});
}

void UnixSocket(void**) {
  OwnServer& own = Own();
  auto store = StoreOrDie(absl::StrCat("redis://", own.socket(), "?db=2&secret=none&command_timeout=0.5"));
  assert_true(absl::StrContains(store->Describe(), own.socket()));
  const std::string r = UniqueResource("socket");
  Lock lock = MakeLock(store, r);
  assert_true(Try(lock));
  Raw db2(absl::StrCat(own.dsn(), "/2"));
  assert_int_equal(db2.Int({"EXISTS", r}), 1);
}

void NoscriptRecovery(void**) {
  OwnServer& own = Own();
  Raw raw(own.dsn());
  for (const char* format : kFormats) {
    auto store = StoreOrDie(With(own.dsn(), absl::StrCat("format=", format, "&secret=none")));
    const std::string r = UniqueResource("noscript");
    Lock lock = MakeLock(store, r);
    assert_true(Try(lock));
    ASSERT_OK(lock.Release());
    raw.Ok({"SCRIPT", "FLUSH"});
    assert_true(Try(lock));  // NOSCRIPT, SCRIPT LOAD, EVALSHA again
    raw.Ok({"SCRIPT", "FLUSH"});
    ASSERT_OK(lock.Refresh(absl::Seconds(10)));
    raw.Ok({"SCRIPT", "FLUSH"});
    assert_true(Held(lock));
    raw.Ok({"SCRIPT", "FLUSH"});
    ASSERT_OK(lock.Release());
    assert_int_equal(raw.Int({"EXISTS", r}), 0);
  }
}

// Round trips our client made between two points, as the server counts them:
// socket reads it processed (total_reads_processed, Redis 6+), less those of
// the INFO calls themselves. One request per round trip is one read; a
// pipeline of several commands would be one read too, so the test also
// counts the commands (cmdstat_evalsha). total_commands_processed is no use
// here: it also counts every redis.call() inside a script.
class RoundTripCounter {
 public:
  explicit RoundTripCounter(Raw& raw) : raw_(raw) {
    long long a = raw_.Info("stats", "total_reads_processed");
    long long b = raw_.Info("stats", "total_reads_processed");
    info_cost_ = b - a;
  }
  void Start() { start_ = raw_.Info("stats", "total_reads_processed"); }
  long long Stop() {
    return raw_.Info("stats", "total_reads_processed") - start_ - info_cost_;
  }

 private:
  Raw& raw_;
  long long info_cost_ = 0;
  long long start_ = 0;
};

void RoundTrips(void**) {
  OwnServer& own = Own();
  Raw raw(own.dsn());
  RoundTripCounter counter(raw);
  for (const char* format : kFormats) {
    auto store = StoreOrDie(With(own.dsn(), absl::StrCat("format=", format, "&secret=none")));
    const std::string r = UniqueResource("rtt");
    Lock lock = MakeLock(store, r);
    assert_true(Try(lock));  // warm: connected, scripts loaded
    ASSERT_OK(lock.Release());

    const long long evalsha_before = raw.Info("commandstats", "cmdstat_evalsha");
    counter.Start();
    assert_true(Try(lock));
    ASSERT_OK(lock.Release());
    const long long n = counter.Stop();
    const long long evalsha = raw.Info("commandstats", "cmdstat_evalsha") - evalsha_before;
    print_message("format=%s: acquire + release = %lld round trips (%lld EVALSHA)\n", format, n,
                  evalsha);
    assert_int_equal(n, 2);
    assert_int_equal(evalsha, 2);

    // A busy try is one round trip too; so are refresh and check.
    Lock holder = MakeLock(store, r);
    assert_true(Try(holder));
    counter.Start();
    assert_false(Try(lock));
    assert_int_equal(counter.Stop(), 1);
    counter.Start();
    ASSERT_OK(holder.Refresh());
    assert_int_equal(counter.Stop(), 1);
    counter.Start();
    assert_true(Held(holder));
    assert_int_equal(counter.Stop(), 1);
  }
}

void SecretHidesNames(void**) {
  OwnServer& own = Own();
  Raw raw(own.dsn());
  const std::string secret_file = absl::StrCat(MakeTempDir(), "/redis.secret");
  assert_true(WriteFile(secret_file, absl::StrCat(kSecret, "\n")));
  raw.Ok({"FLUSHDB"});
  auto store = StoreOrDie(With(own.dsn(), absl::StrCat("prefix=app:&secret_file=", secret_file)));
  Lock lock = MakeLock(store, "invoice-42");
  assert_true(Try(lock));
  const std::string key = absl::StrCat("app:", kHmacInvoice);
  assert_int_equal(raw.Int({"EXISTS", key}), 1);
  assert_int_equal(raw.Int({"EXISTS", key + ":ipclock"}), 1);
  Reply keys = raw.Cmd({"KEYS", "*invoice*"});
  assert_int_equal(keys->elements, 0);
  assert_false(absl::StrContains(store->Describe(), kSecret));
}

void ParseLockNaming(void**) {
  OwnServer& own = Own();
  Raw raw(own.dsn());
  const std::string secret_file = absl::StrCat(MakeTempDir(), "/parse.secret");
  assert_true(WriteFile(secret_file, kSecret));
  // naming=parse-lock implies format=simple.
  auto keyed = StoreOrDie(With(own.dsn(), absl::StrCat("naming=parse-lock&secret_file=", secret_file)));
  assert_false(keyed->capabilities().shared);
  const std::string key = absl::StrCat("parse-stack:lock:v1:", kHmacInvoice);
  raw.Ok({"DEL", key});
  {
    Lock lock = MakeLock(keyed, "invoice-42");
    assert_true(Try(lock));
    assert_string_equal(raw.Str({"GET", key})->c_str(), TokenOf(lock).c_str());
  }
  assert_int_equal(raw.Int({"EXISTS", key}), 0);
  // A Parse::Lock peer holds it (SET NX PX); we wait; its compare-and-delete
  // releases it.
  raw.Ok({"SET", key, "ruby-peer-token", "NX", "PX", "30000"});
  Lock lock = MakeLock(keyed, "invoice-42");
  assert_false(Try(lock));
  const std::string cad =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  assert_int_equal(raw.Int({"EVAL", cad, "1", key, "ruby-peer-token"}), 1);
  assert_true(Try(lock));
  // ...and the peer's compare-and-delete cannot release ours.
  assert_int_equal(raw.Int({"EVAL", cad, "1", key, "ruby-peer-token"}), 0);
  assert_true(Held(lock));
  ASSERT_OK(lock.Release());
  // Without a secret: plain SHA-256.
  auto unkeyed = StoreOrDie(With(own.dsn(), "naming=parse-lock&secret=none"));
  Lock plain = MakeLock(unkeyed, "invoice-42");
  assert_true(Try(plain));
  assert_string_equal(raw.Str({"GET", absl::StrCat("parse-stack:lock:v1:", kShaInvoice)})->c_str(),
                      TokenOf(plain).c_str());
  // Parse::Lock's limit on names.
  Lock too_long = MakeLock(unkeyed, std::string(1024, 'x'));
  assert_true(Try(too_long));
  LockOptions big;
  big.key_options.max_resource_bytes = 4096;
  absl::StatusOr<Lock> over = Lock::Create(unkeyed, std::string(1025, 'x'), big);
  ASSERT_OK(over);
  ASSERT_CODE(over->TryAcquire(), absl::StatusCode::kInvalidArgument);
}

void WarnsOnceWithoutSecret(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  const std::string dir = MakeTempDir();
  auto stderr_of = [&](const std::vector<std::string>& dsns) {
    const std::string path = absl::StrCat(dir, "/stderr");
    pid_t pid = ForkChild([&] {
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0 || dup2(fd, 2) < 0) return 2;
      for (const std::string& d : dsns) {
        if (!ipclock::StoreFromDsn(d).ok()) return 3;
      }
      return 0;
    });
    assert_int_equal(WaitChild(pid), 0);
    return ReadFileOrEmpty(path);
  };
  std::string out = stderr_of({base, base, With(base, "format=simple")});
  size_t first = out.find("ipclock: warning:");
  assert_true(first != std::string::npos);
  assert_true(out.find("ipclock: warning:", first + 1) == std::string::npos);
  out = stderr_of({With(base, "secret=none"), With(base, absl::StrCat("secret=", kSecret))});
  assert_true(out.find("ipclock: warning:") == std::string::npos);
}

// --- Killing the server -------------------------------------------------------------------

void ServerKilledWhileHeldAndWaiting(void**) {
  OwnServer& own = Own();
  const std::string dsn = With(own.dsn(), "secret=none&connect_timeout=1&command_timeout=2");
  auto holder_store = StoreOrDie(dsn);
  auto waiter_store = StoreOrDie(dsn);
  const std::string r = UniqueResource("killed");
  Lock holder = MakeLock(holder_store, r);
  assert_true(Try(holder));

  struct Result {
    absl::Status status;
    bool acquired = false;
    double seconds = 0;
  } result;
  Lock waiter = MakeLock(waiter_store, r);
  std::thread t([&] {
    const double t0 = NowSeconds();
    result.status = waiter.Acquire(absl::Seconds(2));
    result.seconds = NowSeconds() - t0;
    result.acquired = waiter.is_acquired();
  });
  absl::SleepFor(absl::Milliseconds(300));
  own.Kill();
  t.join();
  print_message("waiter: %s after %.2f s\n", result.status.ToString().c_str(), result.seconds);
  // Fails closed: Unavailable, naming the server, after the whole wait.
  ASSERT_CODE(result.status, absl::StatusCode::kUnavailable);
  assert_false(result.acquired);
  assert_true(Contains(result.status, own.server()));
  assert_true(result.seconds >= 1.9);

  // The holder learns it cannot know.
  absl::Status held = holder.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kUnavailable);
  assert_true(Contains(held, own.server()));
  ASSERT_CODE(holder.Refresh(), absl::StatusCode::kUnavailable);
  absl::Status released = holder.Release();
  ASSERT_CODE(released, absl::StatusCode::kUnavailable);
  print_message("release: %s\n", released.ToString().c_str());
  // A try is Unavailable at once, not "busy".
  Lock probe = MakeLock(waiter_store, r);
  const double t0 = NowSeconds();
  ASSERT_CODE(probe.TryAcquire(), absl::StatusCode::kUnavailable);
  assert_true(NowSeconds() - t0 < 1.5);
  assert_false(probe.is_acquired());

  // Back (empty: no persistence): the same stores work again.
  own.Restart();
  Lock again = MakeLock(holder_store, r);
  assert_true(Try(again));
  Lock rival = MakeLock(waiter_store, r);
  assert_false(Try(rival));
  ASSERT_OK(again.Release());
  assert_true(Try(rival));
}

void WaiterRecoversAfterRestart(void**) {
  OwnServer& own = Own();
  const std::string dsn = With(own.dsn(), "secret=none&connect_timeout=1&command_timeout=2");
  auto holder_store = StoreOrDie(dsn);
  auto waiter_store = StoreOrDie(dsn);
  const std::string r = UniqueResource("restart");
  Lock holder = MakeLock(holder_store, r);
  assert_true(Try(holder));
  std::atomic<bool> done{false};
  absl::Status status;
  Lock waiter = MakeLock(waiter_store, r);
  std::thread t([&] {
    status = waiter.Acquire(absl::Seconds(15));
    done = true;
  });
  absl::SleepFor(absl::Milliseconds(300));
  own.Kill();
  absl::SleepFor(absl::Seconds(1));
  assert_false(done.load());  // still trying, not "acquired", not failed
  own.Restart();
  t.join();
  // The restarted server lost the holder's lock (no persistence), so the
  // waiter gets it, because the server said so. (Fencing is what protects
  // the work of a holder that lost its lock this way.)
  ASSERT_OK(status);
  assert_true(Held(waiter));
  assert_false(Held(holder));
}

// An acquire whose reply is lost (the server stalls past command_timeout)
// may still run on the server: the store releases that orphan as soon as it
// has a connection again, rather than leave it held for a whole lease.
void LostReplyIsReleasedLater(void**) {
  OwnServer& own = Own();
  auto store = StoreOrDie(With(own.dsn(), "secret=none&command_timeout=0.2&connect_timeout=0.2"));
  Raw admin(own.dsn());
  Raw raw(own.dsn());
  const std::string r = UniqueResource("lost-reply");
  Lock warm = MakeLock(store, UniqueResource("warm"));
  assert_true(Try(warm));  // connected, scripts loaded
  std::thread stall([&] { admin.Ok({"DEBUG", "SLEEP", "1"}); });
  absl::SleepFor(absl::Milliseconds(150));
  Lock lock = MakeLock(store, r);
  absl::StatusOr<bool> got = lock.TryAcquire();
  stall.join();
  print_message("during the stall: %s\n", got.status().ToString().c_str());
  ASSERT_CODE(got, absl::StatusCode::kUnavailable);  // never "acquired"
  assert_false(lock.is_acquired());
  absl::SleepFor(absl::Milliseconds(100));
  print_message("orphan on the server after the stall: %lld\n", raw.Int({"EXISTS", r}));
  // The next use of the store reconnects and releases it first.
  Lock other = MakeLock(store, UniqueResource("after-stall"));
  assert_true(Try(other));
  assert_int_equal(raw.Int({"EXISTS", r}), 0);
  Lock rival = MakeLock(store, r);
  assert_true(Try(rival));
}

// --- PHP's Symfony RedisStore as a peer ------------------------------------------------------

std::string AutoloadPath() {
  const char* env = getenv("IPCLOCK_SYMFONY_AUTOLOAD");
  return env != nullptr && env[0] != '\0' ? env
                                          : "/usr/share/php/Symfony/Component/Lock/autoload.php";
}

std::string PeerScript() {
  const char* root = getenv("IPCLOCK_SOURCE_ROOT");
  return absl::StrCat(root != nullptr ? root : ".", "/tests/php/redis_peer.php");
}

const char* PhpMissing() {
  static std::string why;
  if (FindInPath("php").empty()) {
    why = "php is not installed (apt-get install php-cli php-redis php-symfony-lock)";
  } else if (!FileExists(AutoloadPath())) {
    why = absl::StrCat("Symfony Lock is not installed: no ", AutoloadPath());
  } else if (!FileExists(PeerScript())) {
    why = absl::StrCat("no ", PeerScript(), " (is IPCLOCK_SOURCE_ROOT set?)");
  } else if (WaitPlain(Spawn({"php", "-r", "exit(extension_loaded('redis') ? 0 : 1);"}), 30) != 0) {
    why = "php's redis extension is missing (apt-get install php-redis)";
  } else {
    return nullptr;
  }
  return why.c_str();
}

#define REQUIRE_PHP()                                 \
  do {                                                \
    const char* why_missing = PhpMissing();           \
    if (why_missing != nullptr) {                     \
      if (g_require_php) fail_msg("%s", why_missing); \
      print_message("skipped: %s\n", why_missing);    \
      skip();                                         \
    }                                                 \
  } while (0)

// A PHP peer holding a lock until we close its stdin.
class PhpHolder {
 public:
  PhpHolder(const std::string& dsn, const std::string& resource, const char* mode) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) abort();
    SpawnOptions options;
    options.stdin_fd = in[0];
    options.stdout_fd = out[1];
    pid_ = Spawn({"php", PeerScript(), dsn, resource, mode}, options);
    close(in[0]);
    close(out[1]);
    to_php_ = in[1];
    from_php_ = out[0];
  }
  ~PhpHolder() {
    if (to_php_ >= 0) close(to_php_);
    if (from_php_ >= 0) close(from_php_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      WaitPlain(pid_, 5);
    }
  }
  std::string ReadLine(double timeout_sec = 20) {
    std::string line;
    const double until = NowSeconds() + timeout_sec;
    for (;;) {
      struct pollfd p = {from_php_, POLLIN, 0};
      int ms = static_cast<int>((until - NowSeconds()) * 1000);
      if (ms <= 0 || poll(&p, 1, ms) <= 0) return line;
      char c;
      if (read(from_php_, &c, 1) != 1) return line;
      if (c == '\n') return line;
      line.push_back(c);
    }
  }
  void ExpectLocked() {
    std::string line = ReadLine();
    if (line != "locked") fail_msg("php peer said '%s', expected 'locked'", line.c_str());
  }
  void Release() {
    close(to_php_);
    to_php_ = -1;
    std::string last = ReadLine();
    if (last != "released") fail_msg("php peer said '%s', expected 'released'", last.c_str());
    assert_int_equal(WaitChild(pid_), 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int to_php_ = -1;
  int from_php_ = -1;
};

std::string PhpTry(const std::string& dsn, const std::string& resource, const char* mode) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) abort();
  SpawnOptions options;
  options.stdout_fd = out[1];
  pid_t pid = Spawn({"php", PeerScript(), dsn, resource, mode}, options);
  close(out[1]);
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int code = WaitChild(pid);
  if (code != 0) fail_msg("php peer (%s) exited %d: %s", mode, code, text.c_str());
  return std::string(absl::StripAsciiWhitespace(text));
}

void PhpExclusiveBothWays(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  REQUIRE_PHP();
  auto store = StoreOrDie(With(base, "format=symfony&secret=none"));
  const std::string r = UniqueResource("php-x");
  {
    PhpHolder php(base, r, "hold");
    php.ExpectLocked();
    Lock lock = MakeLock(store, r);
    assert_false(Try(lock));
    assert_false(Try(lock, LockMode::kShared));
    php.Release();
    assert_true(Try(lock));
    // ipclock holds: PHP cannot, in either mode.
    assert_string_equal(PhpTry(base, r, "try").c_str(), "busy");
    assert_string_equal(PhpTry(base, r, "try-read").c_str(), "busy");
    assert_true(Held(lock));
    ASSERT_OK(lock.Release());
  }
  assert_string_equal(PhpTry(base, r, "try").c_str(), "acquired");
}

void PhpSharedBothWays(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  REQUIRE_PHP();
  auto store = StoreOrDie(With(base, "format=symfony&secret=none"));
  const std::string r = UniqueResource("php-s");
  {
    // PHP reads: we may read, not write.
    PhpHolder php(base, r, "hold-read");
    php.ExpectLocked();
    Lock reader = MakeLock(store, r), writer = MakeLock(store, r);
    assert_true(Try(reader, LockMode::kShared));
    assert_false(Try(writer));
    assert_false(Try(reader, LockMode::kExclusive));  // two readers: no promotion
    ASSERT_OK(reader.Release());
    php.Release();
    assert_true(Try(writer));
    ASSERT_OK(writer.Release());
  }
  // We read: PHP may read, not write.
  Lock reader = MakeLock(store, r);
  assert_true(Try(reader, LockMode::kShared));
  assert_string_equal(PhpTry(base, r, "try-read").c_str(), "acquired");
  assert_string_equal(PhpTry(base, r, "try").c_str(), "busy");
  assert_true(Held(reader));
  // A sole reader promotes; PHP then cannot read.
  assert_true(Try(reader, LockMode::kExclusive));
  assert_string_equal(PhpTry(base, r, "try-read").c_str(), "busy");
  // Demoted: PHP reads again.
  assert_true(Try(reader, LockMode::kShared));
  assert_string_equal(PhpTry(base, r, "try-read").c_str(), "acquired");
}

void PhpAgainstSimpleFormat(void**) {
  const char* base = RequireEnv("IPCLOCK_TEST_REDIS");
  REQUIRE_PHP();
  // Symfony's "string type = conflict" keeps PHP out of our simple-format
  // locks, and ours see its sorted set as held.
  auto simple = StoreOrDie(With(base, "format=simple&secret=none"));
  const std::string r = UniqueResource("php-simple");
  Lock lock = MakeLock(simple, r);
  assert_true(Try(lock));
  assert_string_equal(PhpTry(base, r, "try").c_str(), "busy");
  assert_string_equal(PhpTry(base, r, "try-read").c_str(), "busy");
  ASSERT_OK(lock.Release());
  PhpHolder php(base, r, "hold");
  php.ExpectLocked();
  assert_false(Try(lock));
  php.Release();
  assert_true(Try(lock));
}

int Teardown(void**) {
  if (g_own != nullptr) g_own->Kill();
  return 0;
}

}  // namespace
}  // namespace ipclock_test

int main(int argc, char** argv) {
  using namespace ipclock_test;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--require-php") == 0) g_require_php = true;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(DsnErrors),
      cmocka_unit_test(ServerDownAtCreation),
      cmocka_unit_test(SymfonyLayout),
      cmocka_unit_test(SimpleLayout),
      cmocka_unit_test(ExpiryOnServerClock),
      cmocka_unit_test(InfiniteTtlRefused),
      cmocka_unit_test(Refresh),
      cmocka_unit_test(LeaseCountsFromAcquisition),
      cmocka_unit_test(SerializedKeyReleasedByAnotherProcess),
      cmocka_unit_test(FencingGrows),
      cmocka_unit_test(OwnerDeathAfterSigkill),
      cmocka_unit_test(StringTypeIsConflict),
      cmocka_unit_test(SelectDb),
      cmocka_unit_test(Auth),
      cmocka_unit_test(AclUser),
      cmocka_unit_test(UnixSocket),
      cmocka_unit_test(NoscriptRecovery),
      cmocka_unit_test(RoundTrips),
      cmocka_unit_test(SecretHidesNames),
      cmocka_unit_test(ParseLockNaming),
      cmocka_unit_test(WarnsOnceWithoutSecret),
      cmocka_unit_test(ServerKilledWhileHeldAndWaiting),
      cmocka_unit_test(WaiterRecoversAfterRestart),
      cmocka_unit_test(LostReplyIsReleasedLater),
      cmocka_unit_test(PhpExclusiveBothWays),
      cmocka_unit_test(PhpSharedBothWays),
      cmocka_unit_test(PhpAgainstSimpleFormat),
  };
  return cmocka_run_group_tests_name("redis_store", tests, nullptr, Teardown);
}
