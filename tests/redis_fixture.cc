// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"  // hiredis's sds.h (C flexible arrays)
#include <hiredis.h>
#pragma GCC diagnostic pop

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/dsn.h"
#include "core/lock_access.h"
#include "ipclock/store_factory.h"
#include "own_server.h"
#include "spawn_util.h"
#include "redis_fixture.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

const char* RequireRedis(const char* name) {
  return RequireEnv(name, "tools/dev test starts the test Redis servers");
}

std::string WithOptions(absl::string_view dsn, absl::string_view options) {
  return absl::StrCat(dsn, absl::StrContains(dsn, '?') ? "&" : "?", options);
}

std::string FormatDsn(absl::string_view dsn, const char* format, absl::string_view more) {
  return WithOptions(dsn, absl::StrCat("format=", format, "&secret=none", more));
}

ipclock::Lock MakeLock(const std::shared_ptr<ipclock::Store>& store,
                       const std::string& resource, absl::Duration ttl) {
  return LockOrFail(store, resource, Ttl(ttl));
}

ipclock::Lock MakeHeldLock(const std::shared_ptr<ipclock::Store>& store,
                           const std::string& resource, absl::Duration ttl) {
  return HeldOrFail(store, resource, Ttl(ttl));
}

bool Held(ipclock::Lock& lock) { return IsStillHeld(lock); }

std::string TokenOf(ipclock::Lock& lock) {
  absl::StatusOr<absl::string_view> t = ipclock::internal::LockAccess::key(lock).Token();
  if (!t.ok()) fail_msg("Token: %s", t.status().ToString().c_str());
  return std::string(*t);
}

bool Contains(const absl::Status& s, absl::string_view what) {
  return absl::StrContains(s.ToString(), what);
}

// --- RedisClient ---------------------------------------------------------------------

void RedisReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

RedisClient::RedisClient(const std::string& dsn_text) {
  absl::StatusOr<ipclock::Dsn> dsn = ipclock::Dsn::Parse(dsn_text);
  if (!dsn.ok()) fail_msg("RedisClient: %s", dsn.status().ToString().c_str());
  struct timeval tv = {5, 0};
  c_ = dsn->host().empty()
           ? redisConnectUnixWithTimeout(dsn->path().c_str(), tv)
           : redisConnectWithTimeout(dsn->host().c_str(), dsn->port() ? dsn->port() : 6379, tv);
  if (c_ == nullptr || c_->err) fail_msg("RedisClient: cannot connect to %s", dsn->redacted().c_str());
  redisSetTimeout(c_, tv);
  std::string password = dsn->has_password() ? dsn->password() : dsn->user();
  if (!password.empty()) Ok({"AUTH", password});
  if (!dsn->host().empty() && dsn->path().size() > 1) Ok({"SELECT", dsn->path().substr(1)});
}

RedisClient::~RedisClient() {
  if (c_ != nullptr) redisFree(c_);
}

RawReply RedisClient::Cmd(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  void* r = redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data());
  if (r == nullptr) fail_msg("RedisClient %s: %s", args[0].c_str(), c_->errstr);
  return RawReply(static_cast<redisReply*>(r));
}

std::optional<std::string> RedisClient::Str(const std::vector<std::string>& args) {
  RawReply r = Cmd(args);
  if (r->type == REDIS_REPLY_NIL) return std::nullopt;
  if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) {
    fail_msg("RedisClient %s: not a string reply (type %d: %s)", args[0].c_str(), r->type,
             r->str != nullptr ? r->str : "");
  }
  return std::string(r->str, r->len);
}

long long RedisClient::Int(const std::vector<std::string>& args) {
  RawReply r = Cmd(args);
  if (r->type != REDIS_REPLY_INTEGER) {
    fail_msg("RedisClient %s: not an integer reply (type %d: %s)", args[0].c_str(), r->type,
             r->str != nullptr ? r->str : "");
  }
  return r->integer;
}

void RedisClient::Ok(const std::vector<std::string>& args) {
  RawReply r = Cmd(args);
  if (r->type == REDIS_REPLY_ERROR) fail_msg("RedisClient %s: %s", args[0].c_str(), r->str);
}

long long RedisClient::ServerMillis() {
  RawReply r = Cmd({"TIME"});
  long long s = 0, us = 0;
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
      !absl::SimpleAtoi(r->element[0]->str, &s) || !absl::SimpleAtoi(r->element[1]->str, &us)) {
    fail_msg("RedisClient TIME: bad reply");
  }
  return s * 1000 + us / 1000;
}

long long RedisClient::Info(const std::string& section, const std::string& field) {
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

long long AsNumber(const std::optional<std::string>& s) {
  long long v = 0;
  if (!s || !absl::SimpleAtoi(*s, &v)) fail_msg("not a number: %s", s ? s->c_str() : "(nil)");
  return v;
}

// --- RedisServer ---------------------------------------------------------------------

namespace {

// The ports tools/test-servers/ports.sh leaves to tests' own servers.
int PortBase() { return TestPortBase() + 90; }
int PortLimit() { return PortBase() + 9; }

}  // namespace

std::string RedisServer::socket() const { return absl::StrCat(dir_, "/redis.sock"); }
std::string RedisServer::dsn() const { return absl::StrCat("redis://127.0.0.1:", port_); }
std::string RedisServer::server() const { return absl::StrCat("127.0.0.1:", port_); }

const char* RedisServer::Start() {
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

void RedisServer::Kill() {
  KillOwnServer(&pid_);
}

void RedisServer::Restart() {
  Kill();
  Launch();
}

void RedisServer::Launch() {
  const std::string port = absl::StrCat(port_);
  const std::string sock = socket();
  const std::string log = absl::StrCat(dir_, "/redis.log");
  std::vector<std::string> args = {"redis-server", "--port", port, "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", "--dir", dir_,
                                   "--unixsocket", sock, "--unixsocketperm", "700",
                                   "--daemonize", "no", "--logfile", log,
                                   "--enable-debug-command", "local"};
  SpawnOptions options;
  options.die_with_test = true;
  pid_t pid = Spawn(args, options);
  pid_ = pid;
  const double until = NowSeconds() + 10;
  while (NowSeconds() < until) {
    // Another program can take the port between our probe and the server's
    // bind: the server then exits at once, and the next port is tried.
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

namespace {
RedisServer* g_own = nullptr;
}  // namespace

RedisServer& OwnRedis() {
  if (g_own == nullptr) g_own = new RedisServer();
  SkipIf(g_own->Start(), UnderCi());
  RedisClient admin(g_own->dsn());
  admin.Ok({"FLUSHALL"});
  admin.Ok({"CONFIG", "SET", "maxmemory", "0"});
  admin.Ok({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  admin.Ok({"CONFIG", "RESETSTAT"});
  return *g_own;
}

int KillOwnRedis(void**) {
  if (g_own != nullptr) g_own->Kill();
  return 0;
}

// --- PHP's Symfony RedisStore ---------------------------------------------------------

namespace {

std::string PeerScript() { return PhpPeerScript("redis_peer.php"); }

}  // namespace

const char* RedisPhpMissing() {
  return PhpPeerMissing(
      {PeerScript(), true, "redis", "php-cli php-redis php-symfony-lock"});
}

void RequireRedisPhp(bool required) { SkipIf(RedisPhpMissing(), required); }

std::string PhpRedisTry(const std::string& dsn, const std::string& resource,
                        const char* mode) {
  return RunPhpPeer({"php", PeerScript(), dsn, resource, mode});
}

PhpRedisHolder::PhpRedisHolder(const std::string& dsn, const std::string& resource,
                               const char* mode)
    : PhpPeerHolder({"php", PeerScript(), dsn, resource, mode}) {}

}  // namespace ipclock_test
