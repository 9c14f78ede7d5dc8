// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What every Redis suite needs: the servers of tools/test-servers/redis.sh
// (or a skip), a server of the test's own to stop, restart, flush and
// starve of memory, a plain client to look at and change what the store
// wrote, and PHP's Symfony RedisStore as a peer.
//
// Tests call RequireRedis() / OwnRedis() / RequireRedisPhp() before they
// make any object: a skip longjmps past destructors. Without a server they
// skip, saying why, unless CI=true: then they fail.
//
// Include this header last: it pulls in cmocka.h (through test_util.h).

#ifndef IPCLOCK_TESTS_REDIS_FIXTURE_H_
#define IPCLOCK_TESTS_REDIS_FIXTURE_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"
#include "php_peer.h"
#include "test_util.h"

struct redisContext;
struct redisReply;

namespace ipclock_test {

// The store's two formats, for the tests that run in both.
inline constexpr const char* kRedisFormats[] = {"symfony", "simple"};

// $name (IPCLOCK_TEST_REDIS, _2, _3, _AUTH), or a skip.
const char* RequireRedis(const char* name = "IPCLOCK_TEST_REDIS");

// `dsn` with query `options` appended ('?' or '&').
std::string WithOptions(absl::string_view dsn, absl::string_view options);

// `dsn` for key format `format` ("symfony", "simple"), with no secret
// and then `more` options, if any.
std::string FormatDsn(absl::string_view dsn, const char* format, absl::string_view more = "");

// LockOrFail with a TTL of `ttl`.
ipclock::Lock MakeLock(const std::shared_ptr<ipclock::Store>& store,
                       const std::string& resource,
                       absl::Duration ttl = absl::Seconds(30));
// HeldOrFail with a TTL of `ttl`: a Lock that holds `resource`.
ipclock::Lock MakeHeldLock(const std::shared_ptr<ipclock::Store>& store,
                           const std::string& resource,
                           absl::Duration ttl = absl::Seconds(30));
// Lock::CheckAcquired() as a bool (IsStillHeld).
bool Held(ipclock::Lock& lock);
// The key's owner token.
std::string TokenOf(ipclock::Lock& lock);
bool Contains(const absl::Status& s, absl::string_view what);

struct RedisReplyDeleter {
  void operator()(redisReply* r) const;
};
using RawReply = std::unique_ptr<redisReply, RedisReplyDeleter>;

// A plain hiredis client on redis://[[user]:password@]host:port[/db] or
// redis:///socket, to look at what the store wrote. Every call fails the
// test on a connection error.
class RedisClient {
 public:
  explicit RedisClient(const std::string& dsn);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  RawReply Cmd(const std::vector<std::string>& args);
  // A string or status reply; nullopt for nil. Fails on anything else.
  std::optional<std::string> Str(const std::vector<std::string>& args);
  long long Int(const std::vector<std::string>& args);
  // Fails the test on an error reply.
  void Ok(const std::vector<std::string>& args);
  // The server's clock (TIME) in ms.
  long long ServerMillis();
  // A field of INFO `section`: "total_reads_processed" (stats), or the
  // calls of a commandstats line, e.g. "cmdstat_evalsha".
  long long Info(const std::string& section, const std::string& field);

 private:
  redisContext* c_ = nullptr;
};

// The number in a string reply ("1700000000123"); fails on anything else.
long long AsNumber(const std::optional<std::string>& s);

// A redis-server of the test's own, on loopback at the first free port of
// $IPCLOCK_TEST_PORT_BASE+90..98, with no persistence, a Unix socket and
// DEBUG enabled. It dies with the test process.
class RedisServer {
 public:
  ~RedisServer() { Kill(); }

  // Why it cannot run (nullptr once it runs). Starts it on first use.
  const char* Start();
  // SIGKILL: the server vanishes with everything it held.
  void Kill();
  // Starts it again on the same port, empty.
  void Restart();

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string socket() const;
  std::string dsn() const;     // redis://127.0.0.1:PORT
  std::string server() const;  // 127.0.0.1:PORT, as messages name it

 private:
  void Launch();

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// The suite's own server, started; a skip (a failure under CI=true)
// without redis-server. Reset to defaults (FLUSHALL, no maxmemory) at each
// call.
RedisServer& OwnRedis();
// Kills the own server if one was started (a group teardown).
int KillOwnRedis(void**);

// Why PHP's Symfony RedisStore cannot run here, or nullptr.
const char* RedisPhpMissing();
// Skips (fails with `required`) without the PHP peer.
void RequireRedisPhp(bool required);

// tests/php/redis_peer.php against `dsn`:
//   PhpRedisTry(dsn, r, "try"|"try-read") -> "acquired" or "busy";
//   PhpRedisHolder holds `r` ("hold"|"hold-read") until Release().
std::string PhpRedisTry(const std::string& dsn, const std::string& resource,
                        const char* mode);
class PhpRedisHolder : public PhpPeerHolder {
 public:
  PhpRedisHolder(const std::string& dsn, const std::string& resource, const char* mode);
};

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_REDIS_FIXTURE_H_
