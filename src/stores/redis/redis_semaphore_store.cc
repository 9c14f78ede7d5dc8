// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Counting semaphores on Redis in Symfony Semaphore's layout
// (redis_semaphore_store.h).

#include "stores/redis/redis_semaphore_store.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/backoff.h"
#include "core/capability_flags.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/hiredis_calls.h"
#include "stores/redis/redis_connection.h"
#include "stores/redis/redis_scripts.h"
#include "stores/redis/redis_store.h"

namespace ipclock {
namespace {

constexpr absl::Duration kPollFirst = absl::Milliseconds(5);
constexpr absl::Duration kPollMax = absl::Milliseconds(50);
constexpr absl::Duration kReconnectFirst = absl::Milliseconds(50);
constexpr absl::Duration kReconnectMax = absl::Seconds(1);

struct SemaphoreState final : KeyState {
  RedisNames names;  // {R}:weight and {R}:time
  bool held = false;
};

// Symfony counts leases in seconds: a lease is asked for in whole seconds,
// rounded up.
std::string WholeSeconds(absl::Duration ttl) {
  const int64_t s = absl::ToInt64Seconds(absl::Ceil(ttl, absl::Seconds(1)));
  return absl::StrCat(std::max<int64_t>(s, 1));
}

class RedisSemaphoreStore final : public StoreWithState<SemaphoreState> {
 public:
  RedisSemaphoreStore(const RedisStoreOptions& options, KeyNaming naming, std::string describe)
      : naming_(std::move(naming)),
        describe_(absl::StrCat(describe, " (Symfony Semaphore layout)")),
        conn_(options, describe_, /*semaphores=*/true) {}

  absl::string_view name() const override { return "redis"; }
  std::string Describe() const override { return describe_; }
  Capabilities capabilities() const override {
    return MakeCapabilities(kRedisEntry.scope, kCanExpire | kCanCount | kCanWeigh,
                            RedisCapabilities(RedisStoreOptions()).max_lease);
  }

 private:
  absl::StatusOr<SemaphoreState*> StateOf(Key& key) {
    SemaphoreState& st = EnsureState(key);
    if (st.names.key.empty()) {
      absl::StatusOr<std::string> name = naming_.Name(key.resource());
      if (!name.ok()) return name.status();
      // The braces are a Redis Cluster hash tag, as Symfony writes it.
      st.names.key = absl::StrCat("{", *name, "}:weight");
      st.names.meta = absl::StrCat("{", *name, "}:time");
    }
    return &st;
  }

  // Runs `script` for `key`: its 0 or 1, or the error.
  absl::StatusOr<bool> Run(Key& key, const SemaphoreState& st, RedisScript script,
                           std::initializer_list<absl::string_view> argv) {
    RedisConnection::Call call{key.resource(), nullptr, nullptr};
    absl::StatusOr<RedisReply> r = conn_.Eval(script, st.names, argv, call);
    if (!r.ok()) return r.status();
    const redisReply* reply = r->get();
    if (reply->type == REDIS_REPLY_ERROR) {
      return conn_.ReplyError(reply, key.resource(), RedisScriptName(script));
    }
    if (reply->type != REDIS_REPLY_INTEGER) {
      return UnexpectedError(describe_, key.resource(),
                             absl::StrCat("unexpected reply to the ", RedisScriptName(script),
                                          " script"));
    }
    return reply->integer == 1;
  }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override {
    if (mode != LockMode::kExclusive) {
      return ConfigurationError(describe_, key.resource(), "a semaphore has no shared mode");
    }
    const absl::Duration ttl = key.RemainingLifetime();
    if (ttl == absl::InfiniteDuration()) {
      return ConfigurationError(describe_, key.resource(),
                                "the lease (LockOptions::ttl, --ttl) is without end: expected "
                                "a finite lease");
    }
    if (ttl <= absl::ZeroDuration()) {
      return LostError(describe_, key.resource(), "the lease ran out before the permits were taken");
    }
    absl::StatusOr<SemaphoreState*> st = StateOf(key);
    if (!st.ok()) return st.status();
    absl::StatusOr<absl::string_view> token = key.Token();
    if (!token.ok()) return token.status();
    const std::string seconds = WholeSeconds(ttl);
    const std::string limit = absl::StrCat(key.permits());
    const std::string weight = absl::StrCat(key.weight());
    // A heavy waiter reserves (redis_scripts.cc): with nothing but polls, a
    // stream of lighter holders could keep it out for as long as it lasts.
    const bool reserve = key.weight() > 1 && !deadline.has_passed();
    Backoff poll(kPollFirst, kPollMax);
    Backoff reconnect(kReconnectFirst, kReconnectMax);
    poll.SleepIfTriedJustNow(key, deadline);
    for (;;) {
      const int64_t sent = Deadline::NowNanos();
      absl::StatusOr<bool> got = Run(key, **st, RedisScript::kSemSave,
                                     {*token, seconds, limit, weight, reserve ? "1" : "0"});
      if (got.ok() && *got) {
        // The server's lease counts from the request, and lasts at least
        // the whole seconds asked for; ours counts from before it went out.
        KeyWriter w(key);
        w.ResetLifetime();
        w.ReduceLifetime(ttl - absl::Nanoseconds(Deadline::NowNanos() - sent));
        (*st)->held = true;
        return true;
      }
      if (got.ok()) {
        if (deadline.has_passed() || key.cancelled()) {
          if (reserve) CancelReservation(key, **st, *token);
          return false;
        }
        poll.Sleep(deadline, key.cancel_fd());
        continue;
      }
      if (!absl::IsUnavailable(got.status()) || deadline.has_passed()) {
        if (reserve) CancelReservation(key, **st, *token);
        return got.status();
      }
      reconnect.Sleep(deadline, key.cancel_fd());
    }
  }

  // A waiter that gives up takes its reservation back; one it cannot reach
  // the server to take back expires within 3 s.
  void CancelReservation(Key& key, const SemaphoreState& st, absl::string_view token) {
    (void)Run(key, st, RedisScript::kSemDelete, {absl::StrCat(token, ":r")});
  }

  absl::Status Extend(Key& key, absl::Duration ttl) override {
    SemaphoreState* st = state(key);
    absl::StatusOr<absl::string_view> token = key.Token();
    if (st == nullptr || !st->held || !token.ok()) {
      return LostError(describe_, key.resource(), "cannot refresh: the permits are not held");
    }
    absl::StatusOr<bool> extended = Run(key, *st, RedisScript::kSemExtend, {*token, WholeSeconds(ttl)});
    if (!extended.ok()) return extended.status();
    if (!*extended) {
      st->held = false;
      return LostError(describe_, key.resource(),
                       "cannot refresh: the permits' lease had run out, or the keys were deleted");
    }
    return absl::OkStatus();
  }

  absl::Status Release(Key& key) override {
    SemaphoreState* st = state(key);
    if (st == nullptr || !st->held) return absl::OkStatus();
    absl::StatusOr<absl::string_view> token = key.Token();
    if (!token.ok()) return token.status();
    st->held = false;
    absl::StatusOr<bool> was = Run(key, *st, RedisScript::kSemDelete, {*token});
    if (!was.ok()) return was.status();
    if (!*was) {
      return LostError(describe_, key.resource(),
                       "the permits were no longer held: their lease had run out, or the keys "
                       "were deleted");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<bool> IsHeld(Key& key) override {
    SemaphoreState* st = state(key);
    absl::StatusOr<absl::string_view> token = key.Token();
    if (st == nullptr || !st->held || !token.ok()) return false;
    return Run(key, *st, RedisScript::kSemHeld, {*token});
  }

  absl::Status CheckHeld(Key& key) override {
    absl::StatusOr<bool> held = IsHeld(key);
    if (!held.ok()) return held.status();
    if (!*held) {
      return LostError(describe_, key.resource(),
                       "the permits are no longer held: their lease ran out, or the keys were "
                       "deleted");
    }
    return absl::OkStatus();
  }

  const KeyNaming naming_;
  const std::string describe_;
  RedisConnection conn_;
};

}  // namespace

std::shared_ptr<Store> NewRedisSemaphoreStore(const RedisStoreOptions& options,
                                              KeyNaming naming, std::string describe) {
  return std::make_shared<RedisSemaphoreStore>(options, std::move(naming), std::move(describe));
}

}  // namespace ipclock
