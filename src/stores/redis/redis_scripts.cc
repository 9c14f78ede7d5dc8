// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Symfony-format scripts do to the lock key exactly what Symfony 5.4's
// RedisStore scripts do (same checks, same ZADD/ZREM/PEXPIREAT), with two
// deliberate differences that peers cannot observe: the refresh script
// refuses an owner whose lease ran out, so that it gets Aborted instead of a
// silent revival; and every script may also touch the companion hash
// `K:ipclock`, which no peer reads.

#include "stores/redis/redis_scripts.h"

#include <string>

// hiredis's sds.h has C flexible array members, which -Wpedantic rejects in
// C++; the header is not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <hiredis.h>
#pragma GCC diagnostic pop

#include "absl/strings/str_cat.h"

namespace ipclock {

namespace {

// Scripts that read TIME (or INFO) and then write need effects replication,
// the default from Redis 5 and a no-op since 7; this turns it on for 3.2 to
// 4.
#define IPCLOCK_LUA_PRELUDE \
  "if redis.replicate_commands then redis.replicate_commands() end\n"

#define IPCLOCK_LUA_NOW                                 \
  "local t = redis.call('TIME')\n"                      \
  "local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"

// The expiry now + ttl as decimal text, made once. A Lua number passed to
// redis.call is formatted with "%.17g" at each use, which cost more server
// time than the rest of the acquire script (callgrind); "%d" is cheap, and
// the text is then passed as it is.
#define IPCLOCK_LUA_EXPIRY \
  "local expiry = string.format('%d', now + tonumber(ARGV[2]))\n"

// Symfony: the pre-5.2 string format (and our simple format) is a conflict;
// then "now" from the server clock, and expired owners dropped.
#define IPCLOCK_LUA_SYMFONY_NOW                                          \
  "local key = KEYS[1]\n"                                                \
  "local token = ARGV[1]\n"                                              \
  "if redis.call('TYPE', key).ok == 'string' then return CONFLICT end\n" \
  IPCLOCK_LUA_NOW                                                        \
  "redis.call('ZREMRANGEBYSCORE', key, '-inf', now)\n"

#define IPCLOCK_LUA_PEXPIREAT_MAX \
  "redis.call('PEXPIREAT', key, redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')[2])\n"

// A fresh exclusive acquisition: the fence grows, the holder marker is ours,
// and a marker someone else left (no clean release) means they died.
#define IPCLOCK_LUA_TAKE_MARKER                                         \
  "if ARGV[3] ~= '1' then return 0 end\n"                               \
  "local holder = redis.call('HGET', KEYS[2], 'holder')\n"              \
  "local fence = redis.call('HINCRBY', KEYS[2], 'fence', 1)\n"          \
  "redis.call('HSET', KEYS[2], 'holder', token)\n"                      \
  "if holder and holder ~= token then return fence * 2 + 1 end\n"      \
  "return fence * 2\n"

#define IPCLOCK_LUA_DROP_MARKER                                          \
  "if ARGV[#ARGV] == '1' and redis.call('HGET', KEYS[2], 'holder') == ARGV[1] then\n" \
  "  redis.call('HDEL', KEYS[2], 'holder')\n"                            \
  "end\n"

// The loss report (ParseLoss): what the server holds under the key now that
// the token does not own it. Only reads; runs only on that path.
#define IPCLOCK_LUA_LOST                                                          \
  "local function lost(fenced)\n"                                                 \
  "  local key, meta, token = KEYS[1], KEYS[2], ARGV[1]\n"                        \
  "  local t = redis.call('TIME')\n"                                              \
  "  local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"                         \
  "  local kind = redis.call('TYPE', key).ok\n"                                   \
  "  local score, owners, writer = -1, 0, 0\n"                                    \
  "  if kind == 'zset' then\n"                                                    \
  "    local s = redis.call('ZSCORE', key, token)\n"                              \
  "    if s then score = tonumber(s) end\n"                                       \
  "    owners = redis.call('ZCOUNT', key, '(' .. now, '+inf')\n"                  \
  "    local w = redis.call('ZSCORE', key, '__write__')\n"                        \
  "    if w and tonumber(w) > now then writer = 1; owners = owners - 1 end\n"     \
  "    if score > now then owners = owners - 1 end\n"                             \
  "  elseif kind == 'string' then\n"                                              \
  "    owners, writer = 1, 1\n"                                                   \
  "  end\n"                                                                       \
  "  local holder, fence = 'off', 0\n"                                            \
  "  if fenced then\n"                                                            \
  "    if redis.call('EXISTS', meta) == 0 then\n"                                 \
  "      holder = 'gone'\n"                                                       \
  "    else\n"                                                                    \
  "      local h = redis.call('HGET', meta, 'holder')\n"                          \
  "      if not h then holder = 'none' elseif h == token then holder = 'ours'\n"  \
  "      else holder = 'other' end\n"                                             \
  "      fence = tonumber(redis.call('HGET', meta, 'fence')) or 0\n"              \
  "    end\n"                                                                     \
  "  end\n"                                                                       \
  "  local policy, evicted = '', -1\n"                                            \
  "  local mem = redis.pcall('INFO', 'memory')\n"                                 \
  "  if type(mem) == 'string' then\n"                                             \
  "    policy = string.match(mem, 'maxmemory_policy:([%w%-]+)') or ''\n"          \
  "  end\n"                                                                       \
  "  local stats = redis.pcall('INFO', 'stats')\n"                                \
  "  if type(stats) == 'string' then\n"                                           \
  "    evicted = tonumber(string.match(stats, 'evicted_keys:(%d+)')) or -1\n"     \
  "  end\n"                                                                       \
  "  return {0, kind, score, now, owners, writer, holder, fence, policy, evicted}\n" \
  "end\n"

// The start of Symfony's save() and saveRead(): the key and the token, a
// string under the key (no lock of Symfony's) refused, now and the expiry.
#define IPCLOCK_LUA_SYMFONY_SAVE_HEAD              \
  IPCLOCK_LUA_PRELUDE                              \
  "local key = KEYS[1]\n"                          \
  "local token = ARGV[1]\n"                        \
  "local kind = redis.call('TYPE', key).ok\n"      \
  "if kind == 'string' then return -1 end\n"       \
  IPCLOCK_LUA_NOW                                  \
  IPCLOCK_LUA_EXPIRY

// Symfony save(): exclusive. A key that does not exist (the usual case) is
// taken without looking further. After it, the set holds only our token and
// `__write__`, both expiring at now + ttl, which is then the key's expiry
// (what Symfony's PEXPIREAT of the highest score computes).
constexpr char kSymfonySave[] =
    IPCLOCK_LUA_SYMFONY_SAVE_HEAD
    "local mine, writing = false, false\n"
    "if kind == 'zset' then\n"
    "  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)\n"
    "  mine = redis.call('ZSCORE', key, token)\n"
    "  writing = redis.call('ZSCORE', key, '__write__')\n"
    "  if mine then\n"
    // Not a writer and not alone: cannot promote.
    "    if not writing and redis.call('ZCARD', key) > 1 then return -1 end\n"
    "  elseif redis.call('ZCARD', key) > 0 then\n"
    "    return -1\n"
    "  end\n"
    "end\n"
    "redis.call('ZADD', key, expiry, token, expiry, '__write__')\n"
    "redis.call('PEXPIREAT', key, expiry)\n"
    // Saving again as the writer: same acquisition, same fence.
    "if mine and writing then\n"
    "  if ARGV[3] ~= '1' then return 0 end\n"
    "  return (tonumber(redis.call('HGET', KEYS[2], 'fence')) or 0) * 2\n"
    "end\n"
    IPCLOCK_LUA_TAKE_MARKER;

// Symfony saveRead(): shared; a writer saving it demotes. Returns 1 when a
// writer's marker shows it died, else 0 (readers get no fence).
constexpr char kSymfonySaveRead[] =
    IPCLOCK_LUA_SYMFONY_SAVE_HEAD
    "if kind == 'zset' then\n"
    "  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)\n"
    "  if not redis.call('ZSCORE', key, token) and redis.call('ZSCORE', key, '__write__') then\n"
    "    return -1\n"
    "  end\n"
    "  redis.call('ZADD', key, expiry, token)\n"
    "  redis.call('ZREM', key, '__write__')\n"
    "  " IPCLOCK_LUA_PEXPIREAT_MAX
    "else\n"
    "  redis.call('ZADD', key, expiry, token)\n"
    "  redis.call('PEXPIREAT', key, expiry)\n"
    "end\n"
    "if ARGV[3] ~= '1' then return 0 end\n"
    "local holder = redis.call('HGET', KEYS[2], 'holder')\n"
    "if holder then\n"
    // Our own marker: a demotion, a clean hand-over to readers.
    "  if holder == token then redis.call('HDEL', KEYS[2], 'holder')\n"
    // A writer's marker whose owner is gone: it died. The marker stays for
    // the next writer to see and clear.
    "  elseif not redis.call('ZSCORE', key, holder) then return 1 end\n"
    "end\n"
    "return 0\n";

// Symfony putOffExpiration(), minus the revival of an expired owner: a
// token whose score is past is no owner (Symfony would drop it and then not
// find it either).
constexpr char kSymfonyRefresh[] =
    IPCLOCK_LUA_PRELUDE
    IPCLOCK_LUA_LOST
    "local key = KEYS[1]\n"
    "local token = ARGV[1]\n"
    "if redis.call('TYPE', key).ok ~= 'zset' then return lost(ARGV[3] == '1') end\n"
    IPCLOCK_LUA_NOW
    "local mine = redis.call('ZSCORE', key, token)\n"
    "if not mine or tonumber(mine) <= now then return lost(ARGV[3] == '1') end\n"
    "redis.call('ZREMRANGEBYSCORE', key, '-inf', now)\n"
    IPCLOCK_LUA_EXPIRY
    "if redis.call('ZSCORE', key, '__write__') then\n"
    "  redis.call('ZADD', key, expiry, token, expiry, '__write__')\n"
    "else\n"
    "  redis.call('ZADD', key, expiry, token)\n"
    "end\n"
    IPCLOCK_LUA_PEXPIREAT_MAX
    "return 1\n";

// Symfony delete(). The loss report, when there is one, is made before the
// marker goes, so that it still shows whose marker it was.
constexpr char kSymfonyDelete[] =
    IPCLOCK_LUA_PRELUDE
    IPCLOCK_LUA_LOST
    "local key = KEYS[1]\n"
    "local token = ARGV[1]\n"
    "local result = 1\n"
    // pcall: a key of another type answers with an error, not a score.
    "if type(redis.pcall('ZSCORE', key, token)) == 'string' then\n"
    "  redis.call('ZREM', key, token, '__write__')\n"
    // Readers left: the key lives as long as the longest of them.
    "  if redis.call('ZCARD', key) > 0 then\n"
    "    " IPCLOCK_LUA_PEXPIREAT_MAX
    "  end\n"
    "else\n"
    "  result = lost(ARGV[#ARGV] == '1')\n"
    "end\n"
    IPCLOCK_LUA_DROP_MARKER
    "return result\n";

// Symfony exists().
constexpr char kSymfonyExists[] =
    IPCLOCK_LUA_PRELUDE
    "local CONFLICT = 0\n"
    IPCLOCK_LUA_SYMFONY_NOW
    "if redis.call('ZSCORE', key, token) then return 1 end\n"
    "return 0\n";

// Held: our member, with an expiry still ahead on the server's clock.
constexpr char kSymfonyCheck[] =
    IPCLOCK_LUA_LOST
    "if redis.call('TYPE', KEYS[1]).ok == 'zset' then\n"
    "  local s = redis.call('ZSCORE', KEYS[1], ARGV[1])\n"
    "  local t = redis.call('TIME')\n"
    "  if s and tonumber(s) > t[1] * 1000 + math.floor(t[2] / 1000) then return 1 end\n"
    "end\n"
    "return lost(ARGV[2] == '1')\n";

// GET of a key of another type is an error, which pcall returns as a
// table: never equal to the token.
#define IPCLOCK_LUA_SIMPLE_MINE "redis.pcall('GET', KEYS[1]) == ARGV[1]"

// Simple: SET NX PX; saving again with our own token extends the lease.
// A key of another type (a Symfony sorted set) is somebody else's lock.
constexpr char kSimpleSave[] =
    "local key = KEYS[1]\n"
    "local token = ARGV[1]\n"
    "if not redis.call('SET', key, token, 'NX', 'PX', ARGV[2]) then\n"
    "  if not (" IPCLOCK_LUA_SIMPLE_MINE ") then return -1 end\n"
    "  redis.call('PEXPIRE', key, ARGV[2])\n"
    "  if ARGV[3] ~= '1' then return 0 end\n"
    "  return (tonumber(redis.call('HGET', KEYS[2], 'fence')) or 0) * 2\n"
    "end\n"
    IPCLOCK_LUA_TAKE_MARKER;

// Compare-and-pexpire.
constexpr char kSimpleRefresh[] =
    IPCLOCK_LUA_LOST
    "if " IPCLOCK_LUA_SIMPLE_MINE " then\n"
    "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "  return 1\n"
    "end\n"
    "return lost(ARGV[3] == '1')\n";

// Compare-and-delete.
constexpr char kSimpleDelete[] =
    IPCLOCK_LUA_PRELUDE
    IPCLOCK_LUA_LOST
    "local result = 1\n"
    "if " IPCLOCK_LUA_SIMPLE_MINE " then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "else\n"
    "  result = lost(ARGV[#ARGV] == '1')\n"
    "end\n"
    IPCLOCK_LUA_DROP_MARKER
    "return result\n";

// Held: GET is our token.
constexpr char kSimpleCheck[] =
    IPCLOCK_LUA_LOST
    "if " IPCLOCK_LUA_SIMPLE_MINE " then return 1 end\n"
    "return lost(ARGV[2] == '1')\n";

absl::string_view Text(const redisReply* r) {
  return r->str != nullptr ? absl::string_view(r->str, r->len) : absl::string_view();
}

std::string Plural(int64_t n, absl::string_view one, absl::string_view many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

}  // namespace

// Symfony Semaphore's RedisStore layout: a token's weight in the sorted set
// KEYS[1] and its expiry, in whole Unix seconds, in KEYS[2]; a token whose
// expiry has passed holds nothing, and the next save drops it from both.
// Both keys expire 10 s after the latest expiry. Now is the server's clock
// (TIME), not the client's; an expiry is now + lease + 1, since TIME's
// seconds are cut down and the lease must last at least as asked.
#define IPCLOCK_SEM_LIVE                                                  \
  "local now = tonumber(redis.call('TIME')[1])\n"                         \
  "local function live(token)\n"                                         \
  "  local e = redis.call('ZSCORE', KEYS[2], token)\n"                   \
  "  return e and tonumber(e) > now and redis.call('ZSCORE', KEYS[1], token)\n" \
  "end\n"                                                                 \
  "local function expire_both()\n"                                       \
  "  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]\n" \
  "  if last then\n"                                                     \
  "    redis.call('EXPIREAT', KEYS[1], tonumber(last) + 10)\n"            \
  "    redis.call('EXPIREAT', KEYS[2], tonumber(last) + 10)\n"            \
  "  end\n"                                                               \
  "end\n"

// With ARGV[5] = "1", a waiter that finds too few permits free reserves
// them: it enters the sets as `TOKEN:r` with its weight and an expiry of
// 3 s (renewed by each try), so that the permits that come free stay free
// for it, as Symfony counts every member; it then takes them all once the
// others leave room, its reservation aside. One reservation at a time, so
// that two reservers never wait for each other. A dead waiter's goes when
// it expires.
constexpr const char kSemaphoreSave[] = IPCLOCK_SEM_LIVE
    "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)\n"
    "redis.call('ZINTERSTORE', KEYS[1], 2, KEYS[1], KEYS[2], 'WEIGHTS', 1, 0)\n"
    "if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 1 end\n"
    "local mine = ARGV[1] .. ':r'\n"
    "local taken, reserved = 0, false\n"
    "local held = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n"
    "for i = 1, #held, 2 do\n"
    "  if held[i] ~= mine then\n"
    "    taken = taken + tonumber(held[i + 1])\n"
    "    if string.sub(held[i], -2) == ':r' then reserved = true end\n"
    "  end\n"
    "end\n"
    "if taken + tonumber(ARGV[4]) > tonumber(ARGV[3]) then\n"
    "  if ARGV[5] == '1' and not reserved then\n"
    "    redis.call('ZADD', KEYS[2], now + 3, mine)\n"
    "    redis.call('ZADD', KEYS[1], ARGV[4], mine)\n"
    "    expire_both()\n"
    "  end\n"
    "  return 0\n"
    "end\n"
    "redis.call('ZREM', KEYS[2], mine)\n"
    "redis.call('ZREM', KEYS[1], mine)\n"
    "redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]) + 1, ARGV[1])\n"
    "redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])\n"
    "expire_both()\n"
    "return 1\n";

// An expired token is not brought back: it is dropped, and the answer is 0.
constexpr const char kSemaphoreExtend[] = IPCLOCK_SEM_LIVE
    "if not live(ARGV[1]) then\n"
    "  redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "  redis.call('ZREM', KEYS[1], ARGV[1])\n"
    "  return 0\n"
    "end\n"
    "redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]) + 1, ARGV[1])\n"
    "expire_both()\n"
    "return 1\n";

constexpr const char kSemaphoreDelete[] = IPCLOCK_SEM_LIVE
    "local was = live(ARGV[1])\n"
    "redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "redis.call('ZREM', KEYS[1], ARGV[1])\n"
    "if was then return 1 end\n"
    "return 0\n";

constexpr const char kSemaphoreHeld[] = IPCLOCK_SEM_LIVE
    "if live(ARGV[1]) then return 1 end\n"
    "return 0\n";

#undef IPCLOCK_SEM_LIVE

const char* RedisScriptText(RedisStoreOptions::Format format, RedisScript script) {
  const bool symfony = format == RedisStoreOptions::Format::kSymfony;
  switch (script) {
    case RedisScript::kSave: return symfony ? kSymfonySave : kSimpleSave;
    case RedisScript::kSaveRead: return symfony ? kSymfonySaveRead : nullptr;
    case RedisScript::kRefresh: return symfony ? kSymfonyRefresh : kSimpleRefresh;
    case RedisScript::kDelete: return symfony ? kSymfonyDelete : kSimpleDelete;
    case RedisScript::kExists: return symfony ? kSymfonyExists : nullptr;
    case RedisScript::kCheck: return symfony ? kSymfonyCheck : kSimpleCheck;
    // The semaphore layout is Symfony's in either format.
    case RedisScript::kSemSave: return kSemaphoreSave;
    case RedisScript::kSemExtend: return kSemaphoreExtend;
    case RedisScript::kSemDelete: return kSemaphoreDelete;
    case RedisScript::kSemHeld: return kSemaphoreHeld;
  }
  return nullptr;
}

const char* RedisScriptName(RedisScript script) {
  switch (script) {
    case RedisScript::kSave: return "acquire";
    case RedisScript::kSaveRead: return "acquire-shared";
    case RedisScript::kRefresh: return "refresh";
    case RedisScript::kDelete: return "release";
    case RedisScript::kExists: return "exists";
    case RedisScript::kCheck: return "check";
    case RedisScript::kSemSave: return "semaphore acquire";
    case RedisScript::kSemExtend: return "semaphore refresh";
    case RedisScript::kSemDelete: return "semaphore release";
    case RedisScript::kSemHeld: return "semaphore check";
  }
  return "?";
}

bool ParseLoss(const redisReply* r, RedisLoss* loss) {
  // {0, type, score, now, owners, writer, holder, fence, policy, evicted}
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 10) return false;
  const redisReply* const* e = r->element;
  for (size_t i : {0, 2, 3, 4, 5, 7, 9}) {
    if (e[i]->type != REDIS_REPLY_INTEGER) return false;
  }
  for (size_t i : {1, 6, 8}) {
    if (e[i]->type != REDIS_REPLY_STRING) return false;
  }
  if (e[0]->integer != 0) return false;
  loss->type = std::string(Text(e[1]));
  loss->score = e[2]->integer;
  loss->now = e[3]->integer;
  loss->owners = e[4]->integer;
  loss->writer = e[5]->integer == 1;
  loss->holder = std::string(Text(e[6]));
  loss->fence = e[7]->integer;
  loss->policy = std::string(Text(e[8]));
  loss->evicted_keys = e[9]->integer;
  return true;
}

std::string DescribeLoss(const RedisLoss& loss, const RedisLossContext& context) {
  const bool symfony = context.format == RedisStoreOptions::Format::kSymfony;
  const absl::string_view ours = symfony ? "zset" : "string";
  std::string what;
  if (loss.score >= 0 && loss.score <= loss.now) {
    what = absl::StrCat("its lease ran out on the server's clock ",
                        loss.now - loss.score, " ms ago");
  } else if (loss.owners > 0) {
    std::string who =
        loss.writer ? std::string("a writer") : Plural(loss.owners, "reader", "readers");
    if (loss.type != ours) {
      absl::StrAppend(&who, symfony ? " in the string format (SET NX: Parse::Lock, "
                                      "redis-py, Symfony before 5.2, format=simple)"
                                    : " in Symfony's sorted-set format");
    }
    if (loss.holder == "other" && loss.fence > 0) {
      absl::StrAppend(&who, " with fencing token ", loss.fence);
    }
    what = absl::StrCat("another owner holds it now (", who,
                        "): this one's entry was lost first (deleted, flushed, "
                        "evicted, or its lease ran out)");
  } else if (loss.type != "none" && loss.type != ours) {
    what = absl::StrCat("the key was overwritten with a value of type ", loss.type);
  } else if (context.restarted) {
    what = "the key is gone: the server was restarted or replaced (its run_id "
           "changed) since the lock was taken, and came back without it (it keeps "
           "no data across restarts, or lost its latest writes)";
  } else if (loss.holder == "gone") {
    what = absl::StrCat("the key is gone, and so is its companion key ",
                        context.meta_key,
                        ", which never expires: the database was flushed "
                        "(FLUSHALL or FLUSHDB), or both keys were evicted");
  } else if (context.lease_left <= absl::ZeroDuration()) {
    what = "the key is gone: its lease ran out and the server expired it";
  } else {
    what = absl::StrCat("the key is gone with ",
                        absl::FormatDuration(absl::Trunc(context.lease_left,
                                                         absl::Milliseconds(1))),
                        " of its lease left: it was deleted (DEL or UNLINK) or evicted");
  }
  if (!loss.policy.empty() && loss.policy != "noeviction" && loss.evicted_keys > 0) {
    absl::StrAppend(&what, "; this server evicts keys when it reaches maxmemory "
                           "(maxmemory-policy ",
                    loss.policy, ", ", Plural(loss.evicted_keys, "key", "keys"),
                    " evicted since it started): a lock server needs "
                    "maxmemory-policy noeviction");
  }
  return what;
}

}  // namespace ipclock
