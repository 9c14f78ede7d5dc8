// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Redis store's protocol: the Lua scripts it loads on each connection
// (one EVALSHA per operation), and what their replies mean.
//
// Every script takes KEYS[1] = the lock key, KEYS[2] = its companion hash
// `K:ipclock` (fence counter and holder marker), and ARGV[1] = the owner
// token. Acquire scripts return one integer: -1 for "held by someone else",
// else fence * 2 + previous_owner_died (DecodeAcquired below; one integer
// is one allocation for the client's reply parser, an array was five).
// The others return 1 when the token held the key,
// or, when it did not, a *loss report*: what the server holds instead, so
// that a lost lock is reported with what happened to it (ParseLoss,
// DescribeLoss below). Loss reports cost nothing while the lock is held.

#ifndef IPCLOCK_STORES_REDIS_SCRIPTS_H_
#define IPCLOCK_STORES_REDIS_SCRIPTS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/stores/redis_store.h"

struct redisReply;

namespace ipclock {

enum class RedisScript : int {
  kSave,      // exclusive acquire. ARGV: token, ttl ms, fencing flag ("1"/"0")
  kSaveRead,  // shared acquire (symfony format). ARGV: as kSave
  kRefresh,   // extend the lease. ARGV: token, ttl ms, fencing flag
  kDelete,    // release. ARGV: token, fencing flag
  kExists,    // symfony format's exists(). ARGV: token
  kCheck,     // still held? read-only. ARGV: token, fencing flag
  // Counting semaphores in Symfony Semaphore's layout: KEYS[1] = the
  // weights (`{R}:weight`), KEYS[2] = the expiries (`{R}:time`). Each
  // answers 1 (taken, extended, released or held by the token) or 0.
  kSemSave,    // ARGV: token, lease in whole seconds, limit, weight, reserve ("1"/"0")
  kSemExtend,  // ARGV: token, lease in whole seconds
  kSemDelete,  // ARGV: token
  kSemHeld,    // ARGV: token
};
inline constexpr int kNumRedisScripts = 10;

// Whether `script` is one of a semaphore's: a connection loads either the
// lock scripts or the semaphore scripts (RedisConnection's `semaphores`).
inline bool IsSemaphoreScript(RedisScript script) {
  return static_cast<int>(script) >= static_cast<int>(RedisScript::kSemSave);
}

// The script's Lua text in `format`, or nullptr where the format has none
// (the simple format has no shared locks, and its Exists is a plain GET).
const char* RedisScriptText(RedisStoreOptions::Format format, RedisScript script);
// "acquire", "release", ... for messages.
const char* RedisScriptName(RedisScript script);

// An acquire script's reply.
struct RedisAcquired {
  bool acquired = false;
  uint64_t fence = 0;  // 0 without fencing, and for shared locks
  bool previous_owner_died = false;
};
// `reply` is an acquire script's integer. Fences stay exact below 2^52
// acquisitions: Lua numbers are doubles.
inline RedisAcquired DecodeAcquired(long long reply) {
  RedisAcquired a;
  if (reply < 0) return a;
  a.acquired = true;
  a.fence = static_cast<uint64_t>(reply) >> 1;
  a.previous_owner_died = (reply & 1) != 0;
  return a;
}

// What a loss report says the server holds under the lock key.
struct RedisLoss {
  std::string type;     // the key's TYPE: none, zset, string, ...
  int64_t score = -1;   // our token's expiry in ms (symfony format), -1 if absent
  int64_t now = 0;      // the server's clock in ms
  int64_t owners = 0;   // live owners other than `__write__`
  bool writer = false;  // a live writer among them
  // The companion hash: "off" (fencing=false), "gone" (the hash itself is
  // gone), "none" (no holder marker), "ours", "other".
  std::string holder;
  int64_t fence = 0;           // its counter
  std::string policy;          // maxmemory-policy, "" if INFO was refused
  int64_t evicted_keys = -1;   // since the server started, -1 if unknown
};

// Whether `reply` is a loss report, and if so its content in `*loss`.
bool ParseLoss(const redisReply* reply, RedisLoss* loss);

// What the store knows beside the report.
struct RedisLossContext {
  RedisStoreOptions::Format format = RedisStoreOptions::Format::kSymfony;
  // The companion hash's name, for messages.
  absl::string_view meta_key;
  // The server was restarted or replaced (its run_id changed) since the
  // key acquired.
  bool restarted = false;
  // The client's idea of the lease: what was left of it (<= 0: ran out).
  absl::Duration lease_left = absl::InfiniteDuration();
};

// One sentence on how the lock was lost, e.g. "the key is gone, and so is
// its companion key ...: the database was flushed (FLUSHALL or FLUSHDB) or
// both keys were evicted".
std::string DescribeLoss(const RedisLoss& loss, const RedisLossContext& context);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_REDIS_SCRIPTS_H_
