// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisStore: the operations. See include/ipclock/stores/redis_store.h for the
// contract, stores/redis/redis_scripts.h for the protocol (one EVALSHA per
// operation), stores/redis/redis_connection.h for the connection and
// redis_dsn.cc for the DSN.

#include "stores/redis/redis_store.h"


#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/backoff.h"
#include "core/capability_flags.h"
#include "core/key_naming.h"
#include "core/named_file.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/errors.h"
#include "platform/hiredis_calls.h"
#include "stores/redis/redis_connection.h"
#include "stores/redis/redis_scripts.h"
#include "stores/redis/redis_semaphore_store.h"
#include "stores/redis/redis_tracking.h"

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

int64_t CeilMillis(absl::Duration d) {
  int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(d, absl::Milliseconds(1)));
  return std::max<int64_t>(ms, 1);
}

// Decimal text of `v` in `buf`, without allocating.
absl::string_view Decimal(int64_t v, char (&buf)[24]) {
  std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  return absl::string_view(buf, static_cast<size_t>(r.ptr - buf));
}

// What the store keeps of a key between calls.
struct RedisKeyState final : KeyState {
  // Whether the key holds the lock as far as this store knows. A key made by
  // Key::Deserialize starts unknown: it may hold a lock taken elsewhere.
  enum class Held : uint8_t { kUnknown, kYes, kNo };

  RedisNames names;  // computed once per key
  Held held = Held::kUnknown;
  // The connection's server epoch when the key acquired: a later one means
  // the server was restarted or replaced while the key held the lock.
  uint64_t epoch = 0;
};

class RedisStore final : public StoreWithRelease<RedisKeyState> {
 public:
  RedisStore(const RedisStoreOptions& options, KeyNaming naming, std::string describe)
      : options_(options),
        naming_(std::move(naming)),
        describe_(std::move(describe)),
        conn_(options_, describe_),
        tracker_(options_.tracking ? std::make_shared<RedisTracker>(options_, describe_)
                                   : nullptr) {}

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override { return RedisCapabilities(options_); }

  // Once per process, if the keys are named without a secret.
  void WarnIfNoSecret() const { ipclock::WarnIfNoSecret(naming_, describe_); }

  // Connects for the first time (from NewRedisStore).
  absl::Status Start() { return conn_.Start(); }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status Extend(Key& key, absl::Duration ttl) override;
  // Release() and ReleaseAsDead(): `died` leaves the holder marker in the
  // companion hash, as a holder that died would.
  absl::Status DoRelease(Key& key, bool died) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;
  // Semaphores in Symfony Semaphore's layout, on a connection of their own
  // (redis_semaphore_store.h), made at the first call.
  std::shared_ptr<Store> NativeSemaphores() override {
    std::lock_guard<std::mutex> guard(semaphores_mu_);
    if (semaphores_ == nullptr) semaphores_ = NewRedisSemaphoreStore(options_, naming_, describe_);
    return semaphores_;
  }

 private:
  using Held = RedisKeyState::Held;

  // The key's state, with its server-side names.
  absl::StatusOr<RedisKeyState*> StateOf(Key& key) {
    RedisKeyState& st = EnsureState(key);
    if (st.names.key.empty()) {
      absl::StatusOr<std::string> name = naming_.Name(key.resource());
      if (!name.ok()) return name.status();
      st.names.meta = absl::StrCat(*name, kMetaSuffix);
      st.names.key = *std::move(name);
    }
    return &st;
  }

  // The state and token of a key that has held the lock; Aborted
  // "<doing>this key never held the lock" for one that never did.
  struct Holding {
    RedisKeyState* st;
    absl::string_view token;
  };
  absl::StatusOr<Holding> HoldingOf(Key& key, absl::string_view doing = "") {
    if (!key.has_token()) {
      return LostError(describe_, key.resource(),
                       absl::StrCat(doing, "this key never held the lock"));
    }
    absl::StatusOr<RedisKeyState*> st = StateOf(key);
    if (!st.ok()) return st.status();
    absl::StatusOr<absl::string_view> token = key.Token();
    if (!token.ok()) return token.status();
    return Holding{*st, *token};
  }

  absl::string_view FencingFlag() const { return options_.fencing ? "1" : "0"; }

  // Runs `script`, which answers 1 while `held` still holds the key, and
  // says what else it found; `what` names the call in messages ("refresh").
  absl::Status RunHeldScript(Key& key, const Holding& held, RedisScript script,
                             std::initializer_list<absl::string_view> argv,
                             absl::string_view what, absl::string_view lost);

  absl::StatusOr<RedisAcquired> TryAcquireOnce(const RedisNames& names,
                                          absl::string_view resource,
                                          absl::string_view token, int64_t ttl_ms,
                                          LockMode mode, bool* ambiguous,
                                          uint64_t* epoch);

  // Aborted for a script's reply that says the key did not hold the lock,
  // `what` first ("the lock is no longer held"); Internal for a reply that
  // is neither that nor the 1 of success.
  absl::Status NotHeld(const Key& key, const RedisKeyState& st, const redisReply* reply,
                       uint64_t epoch, absl::string_view what, RedisScript script) const;

  const RedisStoreOptions options_;
  const KeyNaming naming_;
  const std::string describe_;
  RedisConnection conn_;
  // The watch's client tracking; connects when the first lock is followed.
  const std::shared_ptr<RedisTracker> tracker_;
  std::mutex semaphores_mu_;
  std::shared_ptr<Store> semaphores_;  // guarded by semaphores_mu_
};

absl::Status RedisStore::NotHeld(const Key& key, const RedisKeyState& st,
                                 const redisReply* reply, uint64_t epoch,
                                 absl::string_view what, RedisScript script) const {
  RedisLoss loss;
  if (!ParseLoss(reply, &loss)) {
    return UnexpectedError(describe_, key.resource(),
                           absl::StrCat("unexpected reply to the ", RedisScriptName(script),
                                        " script"));
  }
  RedisLossContext context;
  context.format = options_.format;
  context.meta_key = st.names.meta;
  context.restarted = st.held == Held::kYes && st.epoch != epoch;
  context.lease_left = key.has_expiry() ? key.RemainingLifetime() : absl::InfiniteDuration();
  return LostError(describe_, key.resource(),
                   absl::StrCat(what, ": ", DescribeLoss(loss, context)));
}

absl::StatusOr<RedisAcquired> RedisStore::TryAcquireOnce(const RedisNames& names,
                                                    absl::string_view resource,
                                                    absl::string_view token,
                                                    int64_t ttl_ms, LockMode mode,
                                                    bool* ambiguous, uint64_t* epoch) {
  char ttl_buf[24];
  const RedisScript script =
      mode == LockMode::kShared ? RedisScript::kSaveRead : RedisScript::kSave;
  RedisConnection::Call call{resource, ambiguous, epoch};
  absl::StatusOr<RedisReply> r =
      conn_.Eval(script, names, {token, Decimal(ttl_ms, ttl_buf), FencingFlag()}, call);
  if (!r.ok()) return r.status();
  const redisReply* reply = r->get();
  if (reply->type == REDIS_REPLY_ERROR) {
    return conn_.ReplyError(reply, resource, RedisScriptName(script));
  }
  if (reply->type != REDIS_REPLY_INTEGER) {
    return UnexpectedError(describe_, resource,
                           absl::StrCat("unexpected reply to the ", RedisScriptName(script),
                                        " script"));
  }
  return DecodeAcquired(reply->integer);
}

absl::StatusOr<bool> RedisStore::Acquire(Key& key, LockMode mode, Deadline deadline) {
  if (mode == LockMode::kShared && !capabilities().shared) {
    return ConfigurationError(describe_,
                              key.resource(), "format=simple has no shared locks");
  }
  const absl::Duration ttl = key.RemainingLifetime();
  if (ttl == absl::InfiniteDuration()) {
    return ConfigurationError(describe_, key.resource(),
                              "the lease (LockOptions::ttl, --ttl) is without end, or too long to "
                              "count: expected a finite lease");
  }
  if (ttl <= absl::ZeroDuration()) {
    return LostError(describe_, key.resource(),
                     "the lease ran out before the lock was acquired");
  }
  absl::StatusOr<RedisKeyState*> st_or = StateOf(key);
  if (!st_or.ok()) return st_or.status();
  RedisKeyState& st = **st_or;
  const int64_t ttl_ms = CeilMillis(ttl);
  // Whether the key surely held nothing before this call: a fresh key, or
  // one this store saw release. (A deserialized key, with a token, may hold
  // the lock.)
  const bool held_nothing =
      st.held == Held::kNo || (st.held == Held::kUnknown && !key.has_token());
  absl::StatusOr<absl::string_view> token = key.Token();
  if (!token.ok()) return token.status();
  // This key is acquiring again: a release of it still pending from a lost
  // connection must not undo what we are about to do.
  conn_.ForgetRelease(*token);

  Backoff poll(kPollFirst, kPollMax);
  Backoff reconnect(kReconnectFirst, kReconnectMax);
  const int64_t started = Deadline::NowNanos();
  bool ambiguous = false;  // a request may have run with its reply lost
  poll.SleepIfTriedJustNow(key, deadline);
  for (;;) {
    const int64_t sent = Deadline::NowNanos();
    bool lost = false;
    uint64_t epoch = 0;
    absl::StatusOr<RedisAcquired> got =
        TryAcquireOnce(st.names, key.resource(), *token, ttl_ms, mode, &lost, &epoch);
    if (got.ok()) {
      ambiguous = false;  // a definite answer settles every earlier attempt
      if (got->acquired) {
        // The lease counts from this attempt, as the server counts it; our
        // clock starts before the request went out, so it ends first.
        const absl::Duration since_sent =
            absl::Nanoseconds(Deadline::NowNanos() - sent);
        KeyWriter(key).ResetLifetime();
        KeyWriter(key).ReduceLifetime(ttl - since_sent);
        KeyWriter(key).set_fence(mode == LockMode::kExclusive && options_.fencing
                          ? std::optional<uint64_t>(got->fence)
                          : std::nullopt);
        KeyWriter(key).set_previous_owner_died(got->previous_owner_died);
        st.held = Held::kYes;
        st.epoch = epoch;
        return true;
      }
      if (held_nothing) st.held = Held::kNo;
      if (deadline.has_passed()) return false;
      poll.Sleep(deadline);
      continue;
    }
    ambiguous = ambiguous || lost;
    const absl::Status& s = got.status();
    if (!absl::IsUnavailable(s) || deadline.has_passed()) {
      if (held_nothing) {
        st.held = Held::kNo;
        // Our acquire may have run with the reply lost: release it as soon
        // as the server is back rather than leave it for a whole lease.
        if (ambiguous) conn_.QueueRelease(st.names, *token);
      }
      if (absl::IsUnavailable(s) && !(deadline == Deadline::Past())) {
        return Restated(s, absl::StrCat(s.message(), " (gave up waiting after ",
                                   absl::FormatDuration(absl::Nanoseconds(
                                       Deadline::NowNanos() - started)),
                                   "; the lock was not acquired)"));
      }
      return s;
    }
    reconnect.Sleep(deadline);
  }
}

absl::Status RedisStore::Extend(Key& key, absl::Duration ttl) {
  if (ttl == absl::InfiniteDuration()) {
    return ConfigurationError(describe_, key.resource(),
                              "the lease (LockOptions::ttl, --ttl) is without end, or too long to "
                              "count: expected a finite lease");
  }
  absl::StatusOr<Holding> held = HoldingOf(key, "cannot refresh: ");
  if (!held.ok()) return held.status();
  char ttl_buf[24];
  return RunHeldScript(key, *held, RedisScript::kRefresh,
                       {held->token, Decimal(CeilMillis(ttl), ttl_buf), FencingFlag()},
                       "refresh", "cannot refresh: the lock is no longer held");
}

absl::Status RedisStore::RunHeldScript(Key& key, const Holding& held, RedisScript script,
                                       std::initializer_list<absl::string_view> argv,
                                       absl::string_view what, absl::string_view lost) {
  uint64_t epoch = 0;
  RedisConnection::Call call{key.resource(), nullptr, &epoch};
  absl::StatusOr<RedisReply> r = conn_.Eval(script, held.st->names, argv, call);
  if (!r.ok()) return r.status();
  const redisReply* reply = r->get();
  if (reply->type == REDIS_REPLY_ERROR) return conn_.ReplyError(reply, key.resource(), what);
  if (reply->type == REDIS_REPLY_INTEGER && reply->integer == 1) return absl::OkStatus();
  return NotHeld(key, *held.st, reply, epoch, lost, script);
}

absl::Status RedisStore::DoRelease(Key& key, bool died) {
  // A key that never saved has no token, hence nothing on the server.
  if (!key.has_token()) return absl::OkStatus();
  absl::StatusOr<RedisKeyState*> st_or = StateOf(key);
  if (!st_or.ok()) return st_or.status();
  RedisKeyState& st = **st_or;
  // A key this store saw refused or released holds nothing (a lost reply
  // to its acquire was queued for release then).
  if (st.held == Held::kNo) return absl::OkStatus();
  absl::StatusOr<absl::string_view> token = key.Token();
  if (!token.ok()) return token.status();
  uint64_t epoch = 0;
  RedisConnection::Call call{key.resource(), nullptr, &epoch};
  // The flag also has the script drop the holder marker: left, it tells the
  // next holder of a death.
  absl::StatusOr<RedisReply> r =
      conn_.Eval(RedisScript::kDelete, st.names, {*token, died ? absl::string_view("0") : FencingFlag()}, call);
  if (!r.ok()) {
    // Whatever happens next, this key lets go.
    st.held = Held::kNo;
    if (!absl::IsUnavailable(r.status())) return r.status();
    conn_.QueueRelease(st.names, *token);
    return Restated(r.status(), absl::StrCat(r.status().message(),
                                     " (the release is retried when the server "
                                     "is back; the lease ends it otherwise)"));
  }
  const redisReply* reply = r->get();
  absl::Status result;
  if (reply->type == REDIS_REPLY_ERROR) {
    result = conn_.ReplyError(reply, key.resource(), "release");
  } else if (reply->type != REDIS_REPLY_INTEGER || reply->integer != 1) {
    result = NotHeld(key, st, reply, epoch, "the lock was no longer held at release",
                     RedisScript::kDelete);
  }
  st.held = Held::kNo;
  return result;
}

absl::StatusOr<bool> RedisStore::IsHeld(Key& key) {
  if (!key.has_token()) return false;
  absl::StatusOr<Holding> held = HoldingOf(key);
  if (!held.ok()) return held.status();
  RedisConnection::Call call{key.resource()};
  if (options_.format == RedisStoreOptions::Format::kSimple) {
    absl::StatusOr<RedisReply> r = conn_.Command({"GET", held->st->names.key}, call);
    if (!r.ok()) return r.status();
    const redisReply* reply = r->get();
    if (IsRedisError(reply, "WRONGTYPE")) return false;  // someone else's format
    if (reply->type == REDIS_REPLY_ERROR) return conn_.ReplyError(reply, key.resource(), "GET");
    return reply->type == REDIS_REPLY_STRING && RedisReplyText(reply) == held->token;
  }
  absl::StatusOr<RedisReply> r =
      conn_.Eval(RedisScript::kExists, held->st->names, {held->token}, call);
  if (!r.ok()) return r.status();
  const redisReply* reply = r->get();
  if (reply->type == REDIS_REPLY_ERROR) return conn_.ReplyError(reply, key.resource(), "exists");
  return reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
}

// One round trip. The lease is the server's: a key whose client-side lease
// ran out but that the server still keeps is held (the watch on held locks
// reports the client's lease on its own).
absl::Status RedisStore::CheckHeld(Key& key) {
  absl::StatusOr<Holding> held = HoldingOf(key);
  if (!held.ok()) return held.status();
  return RunHeldScript(key, *held, RedisScript::kCheck, {held->token, FencingFlag()}, "check",
                       "the lock is no longer held");
}

WatchTargets RedisStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  if (tracker_ == nullptr) return targets;
  absl::StatusOr<RedisKeyState*> st = StateOf(key);
  if (!st.ok()) return targets;
  targets.events = tracker_;
  targets.event_tag = (*st)->names.key;
  return targets;
}

std::string DescribeOptions(const RedisStoreOptions& options) {
  std::string describe;
  if (!options.unix_socket.empty()) {
    describe = absl::StrCat("redis://", options.user, options.user.empty() ? "" : "@",
                            options.unix_socket, "?db=", options.db);
  } else {
    const bool v6 = absl::StrContains(options.host, ':');
    describe = absl::StrCat("redis://", options.user, options.user.empty() ? "" : "@",
                            v6 ? "[" : "", options.host, v6 ? "]" : "", ":",
                            options.port, "/", options.db);
  }
  if (options.format == RedisStoreOptions::Format::kSimple) {
    absl::StrAppend(&describe, " (format=simple)");
  }
  return describe;
}

}  // namespace

namespace {

std::string Where(const RedisStoreOptions& options) {
  return options.unix_socket.empty() ? absl::StrCat("redis://", options.host, ":", options.port)
                                     : absl::StrCat("redis://", options.unix_socket);
}

absl::StatusOr<KeyNaming> NamingOf(const RedisStoreOptions& options) {
  KeyNamingOptions naming_options;
  naming_options.scheme = options.naming == RedisStoreOptions::Naming::kParseLock
                              ? KeyNamingOptions::Scheme::kParseLock
                              : KeyNamingOptions::Scheme::kPlain;
  naming_options.prefix = options.key_prefix;
  naming_options.secret = options.secret;
  naming_options.secret_none = !options.warn_without_secret;
  return KeyNaming::Create(std::move(naming_options), Where(options));
}

}  // namespace

Capabilities RedisCapabilities(const RedisStoreOptions& options) {
  // Waits poll; the token alone releases or refreshes (serializable).
  return MakeCapabilities(
      kRedisEntry.scope,
      kCanExpire | kCanSerialize |
          When(options.format == RedisStoreOptions::Format::kSymfony, kCanShare) |
          When(options.fencing, kCanFence | kSeesOwnerDeath),
      kLongestServerLease);
}

absl::Status CheckRedisOptions(const RedisStoreOptions& options) {
  const std::string where = Where(options);
  if (options.unix_socket.empty() && options.host.empty()) {
    return ConfigurationError(where, "",
                              "no host and no Unix socket given");
  }
  if (options.port < 1 || options.port > 65535) {
    return ConfigurationError(where, "",
                              "the port must be from 1 to 65535");
  }
  if (options.db < 0) {
    return ConfigurationError(where, "",
                              "the db number must be 0 or more");
  }
  if (!options.user.empty() && options.password.empty()) {
    return ConfigurationError(where, "",
                              "an ACL user needs a password");
  }
  if (options.connect_timeout < absl::ZeroDuration() ||
      options.command_timeout < absl::ZeroDuration() ||
      options.connect_timeout > kRedisMaxTimeout || options.command_timeout > kRedisMaxTimeout) {
    return ConfigurationError(where, "",
                              absl::StrCat("timeouts must be from 0 to ",
                                           absl::FormatDuration(kRedisMaxTimeout)));
  }
  if (options.unix_socket.empty() && !IsHostName(options.host)) {
    return ConfigurationError(where, "",
                              absl::StrCat("host \"", absl::CHexEscape(options.host),
                                           "\": expected a host name or an IP address"));
  }
  if (!options.unix_socket.empty()) {
    // hiredis copies a longer path cut short, and connects to whatever a
    // FIFO or a device path gives it.
    if (absl::Status s = CheckNamedFile(where, absl::StrCat("the Unix socket ", options.unix_socket),
                                        options.unix_socket, FileKind::kUnixSocket,
                                        IfMissing::kFine);
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<KeyNaming> naming = NamingOf(options);
  if (!naming.ok()) return naming.status();
  if (options.naming == RedisStoreOptions::Naming::kParseLock &&
      options.format != RedisStoreOptions::Format::kSimple) {
    return ConfigurationError(where, "",
                              "naming=parse-lock goes with format=simple (Parse::Lock "
                              "uses SET NX PX keys)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Store>> NewRedisStore(const RedisStoreOptions& options) {
  if (absl::Status s = HiredisLibrary().Load(kRedisEntry.name); !s.ok()) return s;
  if (absl::Status s = CheckRedisOptions(options); !s.ok()) return s;
  absl::StatusOr<KeyNaming> naming = NamingOf(options);
  if (!naming.ok()) return naming.status();
  auto store = std::make_shared<RedisStore>(options, *std::move(naming),
                                            DescribeOptions(options));
  if (absl::Status s = store->Start(); !s.ok()) return s;
  store->WarnIfNoSecret();
  return std::shared_ptr<Store>(std::move(store));
}

}  // namespace ipclock
