// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Redis store's connection to its server: one hiredis context, guarded
// by a mutex, that connects (and authenticates, selects the db and loads the
// scripts in one pipelined round trip), reconnects after an error, notices
// fork(), and sends each request as one write.
//
// hiredis is used to connect and to parse replies. Requests are encoded
// here into one reused buffer and sent with send(MSG_NOSIGNAL): hiredis
// 0.14 writes with write(2), which raises SIGPIPE on a dead server, and
// blocking that signal around every request costs four system calls.

#ifndef IPCLOCK_STORES_REDIS_CONNECTION_H_
#define IPCLOCK_STORES_REDIS_CONNECTION_H_

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/stores/redis_store.h"
#include "stores/redis/redis_scripts.h"

struct redisContext;
struct redisReply;

namespace ipclock {

struct RedisReplyFree {
  void operator()(redisReply* r) const;
};
using RedisReply = std::unique_ptr<redisReply, RedisReplyFree>;

// The text of a string, status or error reply ("" for other types).
absl::string_view RedisReplyText(const redisReply* r);
// An error reply whose text starts with `prefix` ("NOSCRIPT", "WRONGTYPE").
bool IsRedisError(const redisReply* r, absl::string_view prefix = "");

// The server-side names of one resource's keys.
struct RedisNames {
  std::string key;   // the lock key
  std::string meta;  // its companion hash, key + ":ipclock"
};

class RedisConnection {
 public:
  // `describe` names the store in messages. A connection loads the lock
  // scripts, or with `semaphores` the semaphore scripts (redis_scripts.h).
  RedisConnection(const RedisStoreOptions& options, std::string describe,
                  bool semaphores = false);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // host:port, [v6]:port or the socket path, for messages.
  const std::string& server() const { return server_; }

  // Connects now, so that a bad address or password fails when the store is
  // made: Unavailable, PermissionDenied.
  absl::Status Start();

  // What a request is for, and what the caller wants to know of it.
  struct Call {
    absl::string_view resource;  // named in errors
    // Set when a request went out and its reply was lost: it may have run.
    bool* ambiguous = nullptr;
    // The server epoch of the connection that answered (see epoch below).
    uint64_t* epoch = nullptr;
  };

  // EVALSHA of `script` on KEYS = {names.key, names.meta} and `argv`,
  // loading the script again after a NOSCRIPT reply (SCRIPT FLUSH, a restart
  // or a failover empties the server's script cache).
  absl::StatusOr<RedisReply> Eval(RedisScript script, const RedisNames& names,
                                  std::initializer_list<absl::string_view> argv,
                                  const Call& call);
  // One command.
  absl::StatusOr<RedisReply> Command(std::initializer_list<absl::string_view> args,
                                     const Call& call);

  // A release that could not reach the server, sent again on the next
  // connection (at most a few hundred are kept; a lease ends the rest).
  void QueueRelease(const RedisNames& names, absl::string_view token);
  // Drops the queued release of `token`: its key is acquiring again.
  void ForgetRelease(absl::string_view token);

  // The store's error for a reply of type error.
  absl::Status ReplyError(const redisReply* r, absl::string_view resource,
                          absl::string_view what) const;

  // How many connections this object has made: what a connection was told
  // (CLIENT TRACKING) went with it when this changes.
  uint64_t connections();

  // For the watch's event source (redis_tracking.h): a connection of its
  // own (replacing any), SUBSCRIBEd to the channel of client tracking's
  // invalidations, `__redis__:invalidate`. Its CLIENT ID, for REDIRECT; an
  // error reply (a server without client tracking, an ACL without the
  // channel) is FailedPrecondition.
  absl::StatusOr<int64_t> SubscribeToInvalidations();
  // The subscribed connection's socket, -1 while there is none. Never
  // waits.
  int invalidations_fd() const { return subscribed_fd_.load(); }
  // What the server pushed to the subscribed connection, read without
  // blocking: `key(name)` for each key it named. kAll when it said that
  // everything changed (FLUSHALL, FLUSHDB), kBroken when the connection
  // ended (the fd is -1 from then on); kBusy when another thread uses the
  // connection (SubscribeToInvalidations() is connecting), with nothing read.
  enum class Pushed { kKeys, kAll, kBroken, kBusy };
  Pushed ReadInvalidations(absl::FunctionRef<void(absl::string_view key)> key);

 private:
  struct Orphan {
    RedisNames names;
    std::string token;
  };

  // All *Locked methods need mu_.
  absl::Status EnsureConnectedLocked(absl::string_view resource);
  absl::Status ConnectLocked(absl::string_view resource);
  void DisconnectLocked();
  void ReleaseOrphansLocked();
  // Sends what `build` writes into the request buffer and reads one reply.
  // A connection that broke since its last use (a server restart, an idle
  // timeout) is replaced and the request sent once more: every request here
  // is idempotent for its token. `build` runs after the connection is made,
  // so it sees the script hashes of the connection that carries it.
  absl::StatusOr<RedisReply> RoundTripLocked(absl::FunctionRef<void(std::string*)> build,
                                             const Call& call);
  // RoundTripLocked() of the request `argv` (`what`, for messages) that
  // sets the subscribed connection up, whose reply must be of type `type`:
  // any other disconnects and is FailedPrecondition, with the server's
  // error or `otherwise`.
  absl::StatusOr<RedisReply> SubscriptionStepLocked(std::initializer_list<absl::string_view> argv,
                                                    absl::string_view what, int type,
                                                    absl::string_view otherwise);
  absl::StatusOr<RedisReply> EvalLocked(RedisScript script, const RedisNames& names,
                                        std::initializer_list<absl::string_view> argv,
                                        const Call& call);

  absl::Status IoError(absl::string_view resource, absl::string_view what, int err,
                       const char* errstr, int saved_errno) const;
  absl::Status SendError(absl::string_view resource, int err) const;
  std::string Scrub(absl::string_view text) const;

  const RedisStoreOptions options_;
  const std::string describe_;
  const bool semaphores_;
  std::string server_;

  std::mutex mu_;
  redisContext* ctx_ = nullptr;  // guarded by mu_
  pid_t ctx_pid_ = 0;            // the process that opened ctx_
  bool ctx_fresh_ = false;       // no request has gone through ctx_ yet
  // The server's run_id, from INFO at connect; "" if INFO was refused.
  std::string run_id_;
  // Grows each time a new connection finds another run_id: the server was
  // restarted or replaced, and what it held may be gone.
  uint64_t epoch_ = 0;
  std::array<std::string, kNumRedisScripts> sha_;
  std::vector<Orphan> orphans_;
  std::string request_;  // reused, so a request allocates nothing
  uint64_t connections_ = 0;                // guarded by mu_
  bool subscribed_ = false;                 // guarded by mu_
  std::atomic<int> subscribed_fd_{-1};      // ctx_'s socket while subscribed_
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_REDIS_CONNECTION_H_
