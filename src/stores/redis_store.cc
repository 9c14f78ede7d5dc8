// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisStore. See include/ipclock/redis_store.h for the contract and
// spec/interop.md ("Redis") for the formats. The Lua scripts below are the
// whole protocol: each is one EVALSHA, loaded once per connection.
//
// The Symfony-format scripts do to the lock key exactly what Symfony 5.4's
// RedisStore scripts do (same checks, same ZADD/ZREM/PEXPIREAT), with two
// deliberate differences that peers cannot observe: the refresh script drops
// expired members first, so an owner whose lease ran out gets Aborted
// instead of a silent revival; and every script may also touch the
// companion hash `K:ipclock` (fencing counter and holder marker), which no
// peer reads.

#include "stores/redis_store.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// hiredis's sds.h has C flexible array members, which -Wpedantic rejects in
// C++; the header is not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <hiredis.h>
#pragma GCC diagnostic pop

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "platform/errors.h"
#include "ipclock/store_interface.h"
#include "core/key_naming.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "redis";
// Suffix of the companion hash of a lock key (fence counter, holder marker).
constexpr absl::string_view kMetaSuffix = ":ipclock";

// Poll backoff while another holder has the lock, and reconnect backoff
// while the server is unreachable; both jittered by +/-25 %.
constexpr absl::Duration kPollFirst = absl::Milliseconds(5);
constexpr absl::Duration kPollMax = absl::Milliseconds(50);
constexpr absl::Duration kReconnectFirst = absl::Milliseconds(50);
constexpr absl::Duration kReconnectMax = absl::Seconds(1);
// Releases that could not reach the server, retried on the next connection.
constexpr size_t kMaxOrphans = 256;

// --- Scripts --------------------------------------------------------------------
//
// Common arguments: KEYS[1] the lock key, KEYS[2] its companion hash;
// ARGV[1] the owner token, ARGV[2] the TTL in ms, ARGV[3] "1" when the
// companion hash is in use (fencing=true). Acquire scripts return
// {1, fence, previous_owner_died} or {0} for "held by someone else".

// Scripts that read TIME and then write need effects replication, the
// default from Redis 5 and a no-op since 7; this turns it on for 3.2 to 4.
#define IPCLOCK_LUA_PRELUDE \
  "if redis.replicate_commands then redis.replicate_commands() end\n"

// Symfony: the pre-5.2 string format (and our simple format) is a conflict;
// then "now" from the server clock, and expired owners dropped.
#define IPCLOCK_LUA_SYMFONY_NOW                                       \
  "local key = KEYS[1]\n"                                             \
  "local token = ARGV[1]\n"                                           \
  "if redis.call('TYPE', key).ok == 'string' then return CONFLICT end\n" \
  "local t = redis.call('TIME')\n"                                    \
  "local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"               \
  "redis.call('ZREMRANGEBYSCORE', key, '-inf', now)\n"

#define IPCLOCK_LUA_PEXPIREAT_MAX \
  "redis.call('PEXPIREAT', key, redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')[2])\n"

// A fresh exclusive acquisition: the fence grows, the holder marker is ours,
// and a marker someone else left (no clean release) means they died.
#define IPCLOCK_LUA_TAKE_MARKER                                         \
  "if ARGV[3] ~= '1' then return {1, 0, 0} end\n"                       \
  "local meta = KEYS[2]\n"                                              \
  "local died = 0\n"                                                    \
  "local holder = redis.call('HGET', meta, 'holder')\n"                 \
  "if holder and holder ~= token then died = 1 end\n"                   \
  "local fence = redis.call('HINCRBY', meta, 'fence', 1)\n"             \
  "redis.call('HSET', meta, 'holder', token)\n"                         \
  "return {1, fence, died}\n"

#define IPCLOCK_LUA_DROP_MARKER                                          \
  "if ARGV[#ARGV] == '1' and redis.call('HGET', KEYS[2], 'holder') == ARGV[1] then\n" \
  "  redis.call('HDEL', KEYS[2], 'holder')\n"                            \
  "end\n"

// Symfony save(): exclusive.
constexpr char kSymfonySave[] =
    IPCLOCK_LUA_PRELUDE
    "local CONFLICT = {0}\n"
    IPCLOCK_LUA_SYMFONY_NOW
    "local ttl = tonumber(ARGV[2])\n"
    "local mine = redis.call('ZSCORE', key, token)\n"
    "local writing = redis.call('ZSCORE', key, '__write__')\n"
    "if mine then\n"
    // Not a writer and not alone: cannot promote.
    "  if not writing and redis.call('ZCOUNT', key, '-inf', '+inf') > 1 then return CONFLICT end\n"
    "elseif redis.call('ZCOUNT', key, '-inf', '+inf') > 0 then\n"
    "  return CONFLICT\n"
    "end\n"
    "redis.call('ZADD', key, now + ttl, token)\n"
    "redis.call('ZADD', key, now + ttl, '__write__')\n"
    IPCLOCK_LUA_PEXPIREAT_MAX
    // Saving again as the writer: same acquisition, same fence.
    "if mine and writing then\n"
    "  if ARGV[3] ~= '1' then return {1, 0, 0} end\n"
    "  return {1, tonumber(redis.call('HGET', KEYS[2], 'fence')) or 0, 0}\n"
    "end\n"
    IPCLOCK_LUA_TAKE_MARKER;

// Symfony saveRead(): shared; a writer saving it demotes.
constexpr char kSymfonySaveRead[] =
    IPCLOCK_LUA_PRELUDE
    "local CONFLICT = {0}\n"
    IPCLOCK_LUA_SYMFONY_NOW
    "local ttl = tonumber(ARGV[2])\n"
    "if not redis.call('ZSCORE', key, token) and redis.call('ZSCORE', key, '__write__') then\n"
    "  return CONFLICT\n"
    "end\n"
    "redis.call('ZADD', key, now + ttl, token)\n"
    "redis.call('ZREM', key, '__write__')\n"
    IPCLOCK_LUA_PEXPIREAT_MAX
    "if ARGV[3] ~= '1' then return {1, 0, 0} end\n"
    "local died = 0\n"
    "local holder = redis.call('HGET', KEYS[2], 'holder')\n"
    "if holder then\n"
    // Our own marker: a demotion, a clean hand-over to readers.
    "  if holder == token then redis.call('HDEL', KEYS[2], 'holder')\n"
    // A writer's marker whose owner is gone: it died. The marker stays for
    // the next writer to see and clear.
    "  elseif not redis.call('ZSCORE', key, holder) then died = 1 end\n"
    "end\n"
    "return {1, 0, died}\n";

// Symfony putOffExpiration(), minus the revival of an expired owner.
constexpr char kSymfonyRefresh[] =
    IPCLOCK_LUA_PRELUDE
    "local CONFLICT = 0\n"
    IPCLOCK_LUA_SYMFONY_NOW
    "local ttl = tonumber(ARGV[2])\n"
    "if not redis.call('ZSCORE', key, token) then return 0 end\n"
    "redis.call('ZADD', key, now + ttl, token)\n"
    "if redis.call('ZSCORE', key, '__write__') then\n"
    "  redis.call('ZADD', key, now + ttl, '__write__')\n"
    "end\n"
    IPCLOCK_LUA_PEXPIREAT_MAX
    "return 1\n";

// Symfony delete(). ARGV: token, meta flag.
constexpr char kSymfonyDelete[] =
    "local key = KEYS[1]\n"
    "local token = ARGV[1]\n"
    "local released = 0\n"
    "if redis.call('TYPE', key).ok ~= 'string' and redis.call('ZSCORE', key, token) then\n"
    "  redis.call('ZREM', key, token)\n"
    "  redis.call('ZREM', key, '__write__')\n"
    "  local max = redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')[2]\n"
    "  if max then redis.call('PEXPIREAT', key, max) end\n"
    "  released = 1\n"
    "end\n"
    IPCLOCK_LUA_DROP_MARKER
    "return released\n";

// Symfony exists(). ARGV: token.
constexpr char kSymfonyExists[] =
    IPCLOCK_LUA_PRELUDE
    "local CONFLICT = 0\n"
    IPCLOCK_LUA_SYMFONY_NOW
    "if redis.call('ZSCORE', key, token) then return 1 end\n"
    "return 0\n";

// Simple: SET NX PX; saving again with our own token extends the lease.
// A key of another type (a Symfony sorted set) is somebody else's lock.
constexpr char kSimpleSave[] =
    "local key = KEYS[1]\n"
    "local token = ARGV[1]\n"
    "if not redis.call('SET', key, token, 'NX', 'PX', ARGV[2]) then\n"
    "  if redis.call('TYPE', key).ok ~= 'string' or redis.call('GET', key) ~= token then\n"
    "    return {0}\n"
    "  end\n"
    "  redis.call('PEXPIRE', key, ARGV[2])\n"
    "  if ARGV[3] ~= '1' then return {1, 0, 0} end\n"
    "  return {1, tonumber(redis.call('HGET', KEYS[2], 'fence')) or 0, 0}\n"
    "end\n"
    IPCLOCK_LUA_TAKE_MARKER;

// Compare-and-pexpire.
constexpr char kSimpleRefresh[] =
    "if redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "end\n"
    "return 0\n";

// Compare-and-delete. ARGV: token, meta flag.
constexpr char kSimpleDelete[] =
    "local released = 0\n"
    "if redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "  released = 1\n"
    "end\n"
    IPCLOCK_LUA_DROP_MARKER
    "return released\n";

enum Script { kSave, kSaveRead, kRefresh, kDelete, kExists, kNumScripts };

// The scripts of each format; nullptr where the format has none (the
// simple format's Exists is a plain GET, and it has no shared locks).
const char* ScriptText(RedisStoreOptions::Format format, Script s) {
  const bool symfony = format == RedisStoreOptions::Format::kSymfony;
  switch (s) {
    case kSave: return symfony ? kSymfonySave : kSimpleSave;
    case kSaveRead: return symfony ? kSymfonySaveRead : nullptr;
    case kRefresh: return symfony ? kSymfonyRefresh : kSimpleRefresh;
    case kDelete: return symfony ? kSymfonyDelete : kSimpleDelete;
    case kExists: return symfony ? kSymfonyExists : nullptr;
    default: return nullptr;
  }
}

const char* ScriptName(Script s) {
  switch (s) {
    case kSave: return "acquire";
    case kSaveRead: return "acquire-shared";
    case kRefresh: return "refresh";
    case kDelete: return "release";
    case kExists: return "exists";
    default: return "?";
  }
}

// --- hiredis helpers --------------------------------------------------------------

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

absl::string_view ReplyText(const redisReply* r) {
  return r->str != nullptr ? absl::string_view(r->str, r->len) : absl::string_view();
}

bool IsError(const redisReply* r, absl::string_view prefix = "") {
  return r->type == REDIS_REPLY_ERROR && absl::StartsWith(ReplyText(r), prefix);
}

// Writes that hit a closed socket raise SIGPIPE, which kills a program that
// did not ignore it. A library must not change the program's dispositions:
// like libpq, block SIGPIPE in this thread around our I/O, swallow one we
// caused, and restore the mask. errno is preserved for the caller.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    const int saved_errno = errno;
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    errno = saved_errno;
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
};

int64_t CeilMillis(absl::Duration d) {
  int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(d, absl::Milliseconds(1)));
  return std::max<int64_t>(ms, 1);
}

struct timeval ToTimevalOrZero(absl::Duration d) {
  if (d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return timeval{0, 0};  // hiredis: no timeout
  }
  return absl::ToTimeval(d);
}

// A jittered, bounded exponential backoff.
class Backoff {
 public:
  Backoff(absl::Duration first, absl::Duration max) : next_(first), max_(max) {}
  // Sleeps for the next step, never past `deadline`.
  void Sleep(Deadline deadline) {
    thread_local std::minstd_rand rng(static_cast<unsigned>(
        Deadline::NowNanos() ^ (static_cast<int64_t>(getpid()) << 20) ^
        static_cast<int64_t>(std::hash<std::thread::id>()(std::this_thread::get_id()))));
    std::uniform_real_distribution<double> jitter(0.75, 1.25);
    absl::Duration step = next_ * jitter(rng);
    next_ = std::min(next_ * 2, max_);
    absl::Duration left = deadline.Remaining();
    absl::SleepFor(std::min(step, left));
  }

 private:
  absl::Duration next_;
  absl::Duration max_;
};

struct Names {
  std::string key;
  std::string meta;
};

// What the store remembers of a key between calls: whether it holds the
// lock (as far as this process knows), so that a lost reply to a re-save
// never queues the release of a lock the key held before.
struct RedisKeyState final : KeyState {
  bool held = false;
};

struct Acquired {
  bool acquired = false;
  uint64_t fence = 0;
  bool died = false;
};

class RedisStore final : public StoreWithState<RedisKeyState> {
 public:
  RedisStore(const RedisStoreOptions& options, KeyNaming naming)
      : options_(options), naming_(std::move(naming)) {
    const bool symfony = options_.format == RedisStoreOptions::Format::kSymfony;
    if (!options_.unix_socket.empty()) {
      server_ = options_.unix_socket;
      describe_ = absl::StrCat("redis://", options_.user.empty() ? "" : options_.user,
                               options_.user.empty() ? "" : "@", options_.unix_socket,
                               "?db=", options_.db);
    } else {
      const bool v6 = absl::StrContains(options_.host, ':');
      server_ = absl::StrCat(v6 ? "[" : "", options_.host, v6 ? "]" : "", ":",
                             options_.port);
      describe_ = absl::StrCat("redis://", options_.user,
                               options_.user.empty() ? "" : "@", server_, "/",
                               options_.db);
    }
    if (!symfony) absl::StrAppend(&describe_, " (format=simple)");
  }

  ~RedisStore() override {
    std::lock_guard<std::mutex> guard(mu_);
    DisconnectLocked();
  }

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override {
    Capabilities c;
    c.blocking = false;  // waits poll
    c.expiring = true;
    c.shared = options_.format == RedisStoreOptions::Format::kSymfony;
    c.serializable = true;  // the token alone releases or refreshes
    c.fencing = options_.fencing;
    c.owner_death = options_.fencing;
    c.counting = false;
    c.scope = Scope::kRemote;
    return c;
  }

  // Once per process, if the keys are named without a secret.
  void WarnIfNoSecret() const { ipclock::WarnIfNoSecret(naming_, describe_); }

  // Connects for the first time (from NewRedisStore).
  absl::Status Start() {
    std::lock_guard<std::mutex> guard(mu_);
    return EnsureConnectedLocked();
  }

  absl::StatusOr<bool> Save(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status PutOffExpiration(Key& key, absl::Duration ttl) override;
  absl::Status Delete(Key& key) override;
  absl::StatusOr<bool> Exists(Key& key) override;

 private:
  struct Orphan {
    Names names;
    std::string token;
  };

  absl::StatusOr<Names> NamesOf(const Key& key) const {
    absl::StatusOr<std::string> name = naming_.Name(key.resource());
    if (!name.ok()) return name.status();
    Names n;
    n.meta = absl::StrCat(*name, kMetaSuffix);
    n.key = *std::move(name);
    return n;
  }

  absl::string_view MetaFlag() const { return options_.fencing ? "1" : "0"; }

  absl::StatusOr<Acquired> TryAcquireOnce(const Names& names,
                                          absl::string_view resource,
                                          absl::string_view token,
                                          int64_t ttl_ms, LockMode mode,
                                          bool* ambiguous);

  // --- Connection (all *Locked methods need mu_) ---------------------------------

  // `resource`, if any, is named in errors.
  absl::Status EnsureConnectedLocked(absl::string_view resource = "");
  absl::Status ConnectLocked(absl::string_view resource);
  void DisconnectLocked();
  void ReleaseOrphansLocked();

  // One command, one reply. A connection that broke since its last use (a
  // server restart, an idle timeout) is replaced and the command sent once
  // more: every command here is idempotent for its token. `*ambiguous` is
  // set when a request reached the socket but its reply was lost.
  absl::StatusOr<Reply> CommandLocked(const std::vector<absl::string_view>& args,
                                      absl::string_view resource,
                                      bool* ambiguous = nullptr);
  // EVALSHA of `script`, loading it again after NOSCRIPT.
  absl::StatusOr<Reply> EvalLocked(Script script, const Names& names,
                                   std::vector<absl::string_view> argv,
                                   absl::string_view resource,
                                   bool* ambiguous = nullptr);

  absl::Status IoError(absl::string_view resource, absl::string_view what,
                       int err, const char* errstr, int saved_errno) const;
  absl::Status ReplyError(const redisReply* r, absl::string_view resource,
                          absl::string_view what) const;
  std::string Scrub(absl::string_view text) const;

  const RedisStoreOptions options_;
  const KeyNaming naming_;
  std::string server_;
  std::string describe_;

  std::mutex mu_;
  redisContext* ctx_ = nullptr;  // guarded by mu_
  pid_t ctx_pid_ = 0;            // the process that opened ctx_
  bool ctx_fresh_ = false;       // no command has gone through ctx_ yet
  std::array<std::string, kNumScripts> sha_;
  std::vector<Orphan> orphans_;
};

// --- Errors --------------------------------------------------------------------------

std::string RedisStore::Scrub(absl::string_view text) const {
  if (options_.password.size() < 2) return std::string(text);
  return absl::StrReplaceAll(text, {{options_.password, "***"}});
}

absl::Status RedisStore::IoError(absl::string_view resource, absl::string_view what,
                                 int err, const char* errstr,
                                 int saved_errno) const {
  std::string detail;
  if (err == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK)) {
    detail = absl::StrCat("no reply within command_timeout (",
                          absl::FormatDuration(options_.command_timeout), ")");
  } else if (err == REDIS_ERR_EOF) {
    detail = "the server closed the connection";
  } else {
    detail = errstr != nullptr && errstr[0] != '\0' ? errstr : "I/O error";
  }
  absl::StatusCode code = absl::StatusCode::kUnavailable;
  if (err == REDIS_ERR_OOM) code = absl::StatusCode::kResourceExhausted;
  if (err == REDIS_ERR_PROTOCOL) code = absl::StatusCode::kInternal;
  return StoreError(code, describe_, resource,
                    absl::StrCat(what, " ", server_, ": ", Scrub(detail)));
}

absl::Status RedisStore::ReplyError(const redisReply* r, absl::string_view resource,
                                    absl::string_view what) const {
  std::string text = Scrub(ReplyText(r));
  absl::StatusCode code = absl::StatusCode::kInternal;
  if (IsError(r, "NOAUTH") || IsError(r, "WRONGPASS") || IsError(r, "NOPERM") ||
      absl::StrContains(text, "invalid password") ||
      absl::StrContains(text, "without any password configured")) {
    code = absl::StatusCode::kPermissionDenied;
  } else if (IsError(r, "LOADING") || IsError(r, "BUSY") ||
             IsError(r, "MASTERDOWN") || IsError(r, "TRYAGAIN") ||
             IsError(r, "CLUSTERDOWN")) {
    code = absl::StatusCode::kUnavailable;
  } else if (IsError(r, "OOM")) {
    code = absl::StatusCode::kResourceExhausted;
  } else if (IsError(r, "WRONGTYPE") || IsError(r, "READONLY")) {
    code = absl::StatusCode::kFailedPrecondition;
  }
  return StoreError(code, describe_, resource,
                    absl::StrCat(what, ": ", server_, " replied: ", text));
}

// --- Connection ------------------------------------------------------------------------

void RedisStore::DisconnectLocked() {
  if (ctx_ != nullptr) {
    // In a child after fork() this closes the child's copy of the socket
    // only; nothing is sent, so the parent's connection is untouched.
    redisFree(ctx_);
    ctx_ = nullptr;
  }
}

absl::Status RedisStore::EnsureConnectedLocked(absl::string_view resource) {
  const pid_t pid = getpid();
  if (ctx_ != nullptr && ctx_pid_ != pid) {
    // We are a forked child: the socket is our parent's conversation.
    DisconnectLocked();
    orphans_.clear();  // the parent retries its own
  }
  if (ctx_ != nullptr) return absl::OkStatus();
  if (absl::Status s = ConnectLocked(resource); !s.ok()) return s;
  if (!orphans_.empty()) {
    ReleaseOrphansLocked();
    if (ctx_ == nullptr) {
      return StoreError(absl::StatusCode::kUnavailable, describe_, resource,
                        absl::StrCat("the connection to ", server_,
                                     " broke right after it was opened"));
    }
  }
  return absl::OkStatus();
}

absl::Status RedisStore::ConnectLocked(absl::string_view resource) {
  SigpipeGuard sigpipe;
  const struct timeval connect_tv = ToTimevalOrZero(options_.connect_timeout);
  const bool timed = connect_tv.tv_sec != 0 || connect_tv.tv_usec != 0;
  redisContext* c;
  if (!options_.unix_socket.empty()) {
    c = timed ? redisConnectUnixWithTimeout(options_.unix_socket.c_str(), connect_tv)
              : redisConnectUnix(options_.unix_socket.c_str());
  } else {
    c = timed ? redisConnectWithTimeout(options_.host.c_str(), options_.port, connect_tv)
              : redisConnect(options_.host.c_str(), options_.port);
  }
  if (c == nullptr) {
    return StoreError(absl::StatusCode::kResourceExhausted, describe_, resource,
                      "out of memory for a Redis connection");
  }
  if (c->err != 0) {
    const int saved_errno = errno;
    absl::Status s = IoError(resource, "cannot connect to", c->err, c->errstr, saved_errno);
    if (c->err == REDIS_ERR_IO && (saved_errno == EINPROGRESS || saved_errno == ETIMEDOUT ||
                                   saved_errno == EAGAIN)) {
      s = StoreError(absl::StatusCode::kUnavailable, describe_, resource,
                     absl::StrCat("cannot connect to ", server_,
                                  ": no answer within connect_timeout (",
                                  absl::FormatDuration(options_.connect_timeout), ")"));
    }
    redisFree(c);
    return s;
  }
  const struct timeval command_tv = ToTimevalOrZero(options_.command_timeout);
  if ((command_tv.tv_sec != 0 || command_tv.tv_usec != 0) &&
      redisSetTimeout(c, command_tv) != REDIS_OK) {
    redisFree(c);
    return StoreError(absl::StatusCode::kInternal, describe_, resource,
                      "cannot set the command timeout on the socket");
  }
  if (options_.unix_socket.empty()) redisEnableKeepAlive(c);

  // One round trip: AUTH, SELECT, CLIENT SETNAME, SCRIPT LOAD x N, pipelined.
  enum class Step { kAuth, kSelect, kName, kLoad };
  std::vector<std::pair<Step, int>> steps;
  auto append = [&](std::vector<absl::string_view> args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (absl::string_view a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    return redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(),
                                  lens.data()) == REDIS_OK;
  };
  bool ok = true;
  if (!options_.password.empty()) {
    ok = ok && (options_.user.empty()
                    ? append({"AUTH", options_.password})
                    : append({"AUTH", options_.user, options_.password}));
    steps.push_back({Step::kAuth, 0});
  }
  const std::string db = absl::StrCat(options_.db);
  if (options_.db != 0) {
    ok = ok && append({"SELECT", db});
    steps.push_back({Step::kSelect, 0});
  }
  const std::string client_name = absl::StrCat("ipclock-", getpid());
  ok = ok && append({"CLIENT", "SETNAME", client_name});
  steps.push_back({Step::kName, 0});
  for (int s = 0; s < kNumScripts; ++s) {
    const char* text = ScriptText(options_.format, static_cast<Script>(s));
    if (text == nullptr) continue;
    ok = ok && append({"SCRIPT", "LOAD", text});
    steps.push_back({Step::kLoad, s});
  }
  if (!ok) {
    redisFree(c);
    return StoreError(absl::StatusCode::kResourceExhausted, describe_, resource,
                      "out of memory building the connection's first requests");
  }
  absl::Status failure;
  for (const auto& [step, script] : steps) {
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) {
      const int saved_errno = errno;
      absl::Status s = IoError(resource, "connection setup with", c->err, c->errstr, saved_errno);
      redisFree(c);
      return s;
    }
    Reply r(static_cast<redisReply*>(raw));
    if (!failure.ok()) continue;  // read the rest, report the first failure
    if (r->type == REDIS_REPLY_ERROR) {
      switch (step) {
        case Step::kAuth:
          failure = StoreError(absl::StatusCode::kPermissionDenied, describe_, resource,
                               absl::StrCat("AUTH", options_.user.empty() ? "" : " as user ",
                                            options_.user, " refused by ", server_,
                                            ": ", Scrub(ReplyText(r.get()))));
          break;
        case Step::kSelect:
          failure = IsError(r.get(), "NOAUTH")
                        ? ReplyError(r.get(), resource, "SELECT")
                        : StoreError(absl::StatusCode::kInvalidArgument, describe_, resource,
                                     absl::StrCat("SELECT ", db, " refused by ", server_,
                                                  ": ", Scrub(ReplyText(r.get()))));
          break;
        case Step::kName:
          // CLIENT SETNAME only names us in CLIENT LIST; an ACL user may
          // lack it, which is fine. Anything else shows again below.
          if (IsError(r.get(), "NOAUTH")) failure = ReplyError(r.get(), resource, "CLIENT SETNAME");
          break;
        case Step::kLoad:
          failure = ReplyError(r.get(), resource,
                               absl::StrCat("SCRIPT LOAD (", ScriptName(static_cast<Script>(script)),
                                            ")"));
          break;
      }
      if (!failure.ok() && failure.code() == absl::StatusCode::kPermissionDenied &&
          options_.password.empty() && IsError(r.get(), "NOAUTH")) {
        failure = StoreError(absl::StatusCode::kPermissionDenied, describe_, resource,
                             absl::StrCat(server_, " requires a password (NOAUTH): "
                                          "give one in the DSN, redis://[user:]password@host"));
      }
      continue;
    }
    if (step == Step::kLoad) {
      if (r->type != REDIS_REPLY_STRING) {
        failure = StoreError(absl::StatusCode::kInternal, describe_, resource,
                             "SCRIPT LOAD did not return a SHA1");
        continue;
      }
      sha_[script] = std::string(ReplyText(r.get()));
    }
  }
  if (!failure.ok()) {
    redisFree(c);
    return failure;
  }
  ctx_ = c;
  ctx_pid_ = getpid();
  ctx_fresh_ = true;
  return absl::OkStatus();
}

// Releases that failed for want of a server, retried once it is back.
void RedisStore::ReleaseOrphansLocked() {
  std::vector<Orphan> orphans;
  orphans.swap(orphans_);  // nested calls below see none
  size_t i = 0;
  for (; i < orphans.size() && ctx_ != nullptr; ++i) {
    // Best effort: if it fails, the lease ends the lock anyway.
    absl::StatusOr<Reply> r =
        EvalLocked(kDelete, orphans[i].names, {orphans[i].token, MetaFlag()}, "");
    if (!r.ok() && r.status().code() == absl::StatusCode::kUnavailable) break;
  }
  // Those not tried wait for the next connection.
  for (; i < orphans.size(); ++i) orphans_.push_back(std::move(orphans[i]));
}

absl::StatusOr<Reply> RedisStore::CommandLocked(
    const std::vector<absl::string_view>& args, absl::string_view resource,
    bool* ambiguous) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (absl::string_view a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  for (int attempt = 0;; ++attempt) {
    if (absl::Status s = EnsureConnectedLocked(resource); !s.ok()) return s;
    const bool fresh = ctx_fresh_;
    ctx_fresh_ = false;
    SigpipeGuard sigpipe;
    if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(),
                               lens.data()) != REDIS_OK) {
      return StoreError(absl::StatusCode::kResourceExhausted, describe_, resource,
                        "out of memory building a Redis request");
    }
    // Write it all first, so that a failure tells "not sent" (nothing
    // happened on the server: a partial request is never executed) from
    // "sent, reply lost" (it may have run).
    int done = 0;
    bool sent = true;
    while (!done) {
      if (redisBufferWrite(ctx_, &done) != REDIS_OK) {
        sent = false;
        break;
      }
    }
    void* raw = nullptr;
    if (sent && redisGetReply(ctx_, &raw) == REDIS_OK && raw != nullptr) {
      return Reply(static_cast<redisReply*>(raw));
    }
    const int saved_errno = errno;
    if (sent && ambiguous != nullptr) *ambiguous = true;
    absl::Status err = IoError(resource, sent ? "no reply from" : "cannot send to",
                               ctx_->err, ctx_->errstr, saved_errno);
    DisconnectLocked();
    // A connection that just opened and failed means the server is gone;
    // one that had been idle may only have been dropped: try once more.
    if (fresh || attempt > 0) return err;
  }
}

absl::StatusOr<Reply> RedisStore::EvalLocked(Script script, const Names& names,
                                             std::vector<absl::string_view> argv,
                                             absl::string_view resource,
                                             bool* ambiguous) {
  for (int attempt = 0;; ++attempt) {
    // Connect first: the SHA1s come from the connection's SCRIPT LOAD.
    if (absl::Status s = EnsureConnectedLocked(resource); !s.ok()) return s;
    // A copy: CommandLocked may reconnect, and a reconnect reloads sha_.
    const std::string sha = sha_[script];
    std::vector<absl::string_view> args = {"EVALSHA", sha, "2", names.key, names.meta};
    args.insert(args.end(), argv.begin(), argv.end());
    absl::StatusOr<Reply> r = CommandLocked(args, resource, ambiguous);
    if (!r.ok()) return r;
    if (!IsError(r->get(), "NOSCRIPT") || attempt > 0) return r;
    // SCRIPT FLUSH, a restart or a failover emptied the script cache.
    absl::StatusOr<Reply> loaded =
        CommandLocked({"SCRIPT", "LOAD", ScriptText(options_.format, script)}, resource);
    if (!loaded.ok()) return loaded;
    if ((*loaded)->type != REDIS_REPLY_STRING) {
      return ReplyError(loaded->get(), resource, "SCRIPT LOAD");
    }
    sha_[script] = std::string(ReplyText(loaded->get()));
  }
}

// --- Operations ------------------------------------------------------------------------

absl::StatusOr<Acquired> RedisStore::TryAcquireOnce(const Names& names,
                                                    absl::string_view resource,
                                                    absl::string_view token,
                                                    int64_t ttl_ms, LockMode mode,
                                                    bool* ambiguous) {
  const std::string ttl = absl::StrCat(ttl_ms);
  const Script script = mode == LockMode::kShared ? kSaveRead : kSave;
  std::lock_guard<std::mutex> guard(mu_);
  absl::StatusOr<Reply> r =
      EvalLocked(script, names, {token, ttl, MetaFlag()}, resource, ambiguous);
  if (!r.ok()) return r.status();
  const redisReply* reply = r->get();
  if (reply->type == REDIS_REPLY_ERROR) {
    return ReplyError(reply, resource, ScriptName(script));
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
      reply->element[0]->type != REDIS_REPLY_INTEGER) {
    return StoreError(absl::StatusCode::kInternal, describe_, resource,
                      absl::StrCat("unexpected reply to the ", ScriptName(script),
                                   " script"));
  }
  Acquired a;
  a.acquired = reply->element[0]->integer == 1;
  if (a.acquired && reply->elements >= 3) {
    a.fence = static_cast<uint64_t>(std::max<long long>(reply->element[1]->integer, 0));
    a.died = reply->element[2]->integer == 1;
  }
  return a;
}

absl::StatusOr<bool> RedisStore::Save(Key& key, LockMode mode, Deadline deadline) {
  if (mode == LockMode::kShared && !capabilities().shared) {
    return StoreError(absl::StatusCode::kFailedPrecondition, describe_,
                      key.resource(), "format=simple has no shared locks");
  }
  const absl::Duration ttl = key.RemainingLifetime();
  if (ttl == absl::InfiniteDuration()) {
    return StoreError(absl::StatusCode::kInvalidArgument, describe_, key.resource(),
                      "a Redis lock needs a finite TTL (LockOptions::ttl)");
  }
  if (ttl <= absl::ZeroDuration()) {
    return StoreError(absl::StatusCode::kAborted, describe_, key.resource(),
                      "the lease ran out before the lock was acquired");
  }
  absl::StatusOr<Names> names = NamesOf(key);
  if (!names.ok()) return names.status();
  const int64_t ttl_ms = CeilMillis(ttl);
  // Whether the key surely held nothing before this call: a fresh key, or
  // one this store saw release. (A deserialized key, with a token and no
  // state, may hold the lock.)
  RedisKeyState* held_state = state(key);
  const bool held_nothing = held_state != nullptr ? !held_state->held : !key.has_token();
  absl::StatusOr<absl::string_view> token = key.Token();
  if (!token.ok()) return token.status();
  {
    // This key is acquiring again: a release of it still pending from a
    // lost connection must not undo what we are about to do.
    std::lock_guard<std::mutex> guard(mu_);
    orphans_.erase(std::remove_if(orphans_.begin(), orphans_.end(),
                                  [&](const Orphan& o) { return o.token == *token; }),
                   orphans_.end());
  }

  Backoff poll(kPollFirst, kPollMax);
  Backoff reconnect(kReconnectFirst, kReconnectMax);
  const int64_t started = Deadline::NowNanos();
  bool ambiguous = false;  // a request may have run with its reply lost
  for (;;) {
    const int64_t sent = Deadline::NowNanos();
    bool lost = false;
    absl::StatusOr<Acquired> got =
        TryAcquireOnce(*names, key.resource(), *token, ttl_ms, mode, &lost);
    if (got.ok()) {
      ambiguous = false;  // a definite answer settles every earlier attempt
      if (got->acquired) {
        // The lease counts from this attempt, as the server counts it; our
        // clock starts before the request went out, so it ends first.
        const absl::Duration since_sent =
            absl::Nanoseconds(Deadline::NowNanos() - sent);
        key.ResetLifetime();
        key.ReduceLifetime(ttl - since_sent);
        key.set_fence(mode == LockMode::kExclusive && options_.fencing
                          ? std::optional<uint64_t>(got->fence)
                          : std::nullopt);
        key.set_previous_owner_died(got->died);
        if (held_state == nullptr) held_state = &EnsureState(key);
        held_state->held = true;
        return true;
      }
      if (deadline.has_passed()) return false;
      poll.Sleep(deadline);
      continue;
    }
    ambiguous = ambiguous || lost;
    const absl::Status& s = got.status();
    if (s.code() != absl::StatusCode::kUnavailable || deadline.has_passed()) {
      if (ambiguous && held_nothing) {
        // Our acquire may have run with the reply lost: release it as soon
        // as the server is back rather than leave it for a whole lease.
        std::lock_guard<std::mutex> guard(mu_);
        if (orphans_.size() < kMaxOrphans) {
          orphans_.push_back(Orphan{*names, std::string(*token)});
        }
      }
      if (s.code() == absl::StatusCode::kUnavailable && !(deadline == Deadline::Past())) {
        return absl::Status(
            s.code(), absl::StrCat(s.message(), " (gave up waiting after ",
                                   absl::FormatDuration(absl::Nanoseconds(
                                       Deadline::NowNanos() - started)),
                                   "; the lock was not acquired)"));
      }
      return s;
    }
    reconnect.Sleep(deadline);
  }
}

absl::Status RedisStore::PutOffExpiration(Key& key, absl::Duration ttl) {
  if (ttl == absl::InfiniteDuration()) {
    return StoreError(absl::StatusCode::kInvalidArgument, describe_, key.resource(),
                      "a Redis lock needs a finite TTL");
  }
  if (!key.has_token()) {
    return StoreError(absl::StatusCode::kAborted, describe_, key.resource(),
                      "cannot refresh: this key never held the lock");
  }
  absl::StatusOr<Names> names = NamesOf(key);
  if (!names.ok()) return names.status();
  absl::StatusOr<absl::string_view> token = key.Token();
  if (!token.ok()) return token.status();
  const std::string ttl_ms = absl::StrCat(CeilMillis(ttl));
  std::lock_guard<std::mutex> guard(mu_);
  absl::StatusOr<Reply> r =
      EvalLocked(kRefresh, *names, {*token, ttl_ms, MetaFlag()}, key.resource());
  if (!r.ok()) return r.status();
  const redisReply* reply = r->get();
  if (reply->type == REDIS_REPLY_ERROR) return ReplyError(reply, key.resource(), "refresh");
  if (reply->type != REDIS_REPLY_INTEGER) {
    return StoreError(absl::StatusCode::kInternal, describe_, key.resource(),
                      "unexpected reply to the refresh script");
  }
  if (reply->integer != 1) {
    return StoreError(absl::StatusCode::kAborted, describe_, key.resource(),
                      "cannot refresh: this key no longer holds the lock (its "
                      "lease ran out or it was released)");
  }
  return absl::OkStatus();
}

absl::Status RedisStore::Delete(Key& key) {
  // A key that never saved has no token, hence nothing on the server.
  if (!key.has_token()) return absl::OkStatus();
  if (RedisKeyState* held_state = state(key); held_state != nullptr) {
    held_state->held = false;  // whatever the server says, this key lets go
  }
  absl::StatusOr<Names> names = NamesOf(key);
  if (!names.ok()) return names.status();
  absl::StatusOr<absl::string_view> token = key.Token();
  if (!token.ok()) return token.status();
  std::lock_guard<std::mutex> guard(mu_);
  absl::StatusOr<Reply> r =
      EvalLocked(kDelete, *names, {*token, MetaFlag()}, key.resource());
  if (!r.ok()) {
    if (r.status().code() == absl::StatusCode::kUnavailable &&
        orphans_.size() < kMaxOrphans) {
      orphans_.push_back(Orphan{*names, std::string(*token)});
      return absl::Status(r.status().code(),
                          absl::StrCat(r.status().message(),
                                       " (the release is retried when the server "
                                       "is back; the lease ends it otherwise)"));
    }
    return r.status();
  }
  if ((*r)->type == REDIS_REPLY_ERROR) return ReplyError(r->get(), key.resource(), "release");
  return absl::OkStatus();
}

absl::StatusOr<bool> RedisStore::Exists(Key& key) {
  if (!key.has_token()) return false;
  absl::StatusOr<Names> names = NamesOf(key);
  if (!names.ok()) return names.status();
  absl::StatusOr<absl::string_view> token = key.Token();
  if (!token.ok()) return token.status();
  std::lock_guard<std::mutex> guard(mu_);
  if (options_.format == RedisStoreOptions::Format::kSimple) {
    absl::StatusOr<Reply> r = CommandLocked({"GET", names->key}, key.resource());
    if (!r.ok()) return r.status();
    const redisReply* reply = r->get();
    if (IsError(reply, "WRONGTYPE")) return false;  // someone else's format
    if (reply->type == REDIS_REPLY_ERROR) return ReplyError(reply, key.resource(), "GET");
    return reply->type == REDIS_REPLY_STRING && ReplyText(reply) == *token;
  }
  absl::StatusOr<Reply> r = EvalLocked(kExists, *names, {*token}, key.resource());
  if (!r.ok()) return r.status();
  const redisReply* reply = r->get();
  if (reply->type == REDIS_REPLY_ERROR) return ReplyError(reply, key.resource(), "exists");
  return reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewRedisStore(const RedisStoreOptions& options) {
  const std::string where =
      options.unix_socket.empty()
          ? absl::StrCat("redis://", options.host, ":", options.port)
          : absl::StrCat("redis://", options.unix_socket);
  if (options.unix_socket.empty() && options.host.empty()) {
    return StoreError(absl::StatusCode::kInvalidArgument, where, "",
                      "no host and no Unix socket given");
  }
  if (options.port < 1 || options.port > 65535) {
    return StoreError(absl::StatusCode::kInvalidArgument, where, "",
                      "the port must be from 1 to 65535");
  }
  if (options.db < 0) {
    return StoreError(absl::StatusCode::kInvalidArgument, where, "",
                      "the db number must be 0 or more");
  }
  if (!options.user.empty() && options.password.empty()) {
    return StoreError(absl::StatusCode::kInvalidArgument, where, "",
                      "an ACL user needs a password");
  }
  if (options.connect_timeout < absl::ZeroDuration() ||
      options.command_timeout < absl::ZeroDuration()) {
    return StoreError(absl::StatusCode::kInvalidArgument, where, "",
                      "timeouts must not be negative");
  }
  KeyNamingOptions naming_options;
  naming_options.scheme = options.naming == RedisStoreOptions::Naming::kParseLock
                              ? KeyNamingOptions::Scheme::kParseLock
                              : KeyNamingOptions::Scheme::kPlain;
  naming_options.prefix = options.key_prefix;
  naming_options.secret = options.secret;
  naming_options.secret_none = !options.warn_without_secret;
  absl::StatusOr<KeyNaming> naming = KeyNaming::Create(std::move(naming_options), where);
  if (!naming.ok()) return naming.status();
  if (options.naming == RedisStoreOptions::Naming::kParseLock &&
      options.format != RedisStoreOptions::Format::kSimple) {
    return StoreError(absl::StatusCode::kInvalidArgument, where, "",
                      "naming=parse-lock goes with format=simple (Parse::Lock "
                      "uses SET NX PX keys)");
  }
  auto store = std::make_shared<RedisStore>(options, *std::move(naming));
  if (absl::Status s = store->Start(); !s.ok()) return s;
  store->WarnIfNoSecret();
  return std::shared_ptr<Store>(std::move(store));
}

absl::StatusOr<std::shared_ptr<Store>> RedisStoreFromDsn(Dsn& dsn,
    const StoreOptions& /*store_options*/) {
  if (dsn.scheme() == "rediss") {
    return absl::UnimplementedError(absl::StrCat(
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

  absl::StatusOr<double> connect_timeout = dsn.TakeSeconds("connect_timeout", 5);
  if (!connect_timeout.ok()) return connect_timeout.status();
  absl::StatusOr<double> command_timeout = dsn.TakeSeconds("command_timeout", 5);
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
  return NewRedisStore(options);
}

const StoreDriver kRedisDriver = {&RedisStoreFromDsn, nullptr};

}  // namespace ipclock
