// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Redis store's event source for the watch on held locks (spi/
// store_interface.h, WatchEventSource): Redis client tracking, so that a
// lock key deleted, flushed, evicted, expired or overwritten is reported at
// once instead of at the watch's next check.
//
// Two connections of its own, made when the first watched lock is
// followed. One is SUBSCRIBEd to `__redis__:invalidate`; the other enables
// CLIENT TRACKING with REDIRECT to the first, and reads (EXISTS) each key
// the watch follows, which is what makes the server track it. When any
// client changes a tracked key, the server pushes the key's name to the
// subscribed connection (and forgets it: the watch follows it again before
// its next check); FLUSHALL and FLUSHDB push "everything". This is the
// RESP2 form of tracking, which hiredis 0.14 parses; RESP3 pushes on one
// connection would need hiredis 1.x.
//
// A server that refuses (Redis before 6.0: no CLIENT TRACKING; an ACL
// without CLIENT or the channel) makes Follow() false, and the watch checks
// at its interval as before; it is asked again a minute later. A
// connection that breaks (a restart, a network cut) ends the subscription:
// Drain() says "everything", every lock is checked, and the next Follow()
// sets both connections up again. What the server does not push: a key
// whose tracking connection alone broke (the server's `timeout` closing it
// while idle) is followed by nobody until the watch's safety-net check.

#ifndef IPCLOCK_STORES_REDIS_TRACKING_H_
#define IPCLOCK_STORES_REDIS_TRACKING_H_

#include <cstdint>
#include <mutex>
#include <string>

#include "ipclock/spi/store_interface.h"
#include "ipclock/stores/redis_store.h"
#include "stores/redis/redis_connection.h"

namespace ipclock {

class RedisTracker final : public WatchEventSource {
 public:
  // `describe` names the store in messages.
  RedisTracker(const RedisStoreOptions& options, const std::string& describe);

  int fd() override { return subscriber_.invalidations_fd(); }
  bool Drain(absl::FunctionRef<void(absl::string_view tag)> changed) override;
  bool Follow(absl::string_view tag) override;

 private:
  // Serializes Follow() (one lane calls it, but a watch per program may
  // each have one).
  std::mutex mu_;
  RedisConnection subscriber_;
  RedisConnection follower_;
  std::string redirect_id_;               // guarded by mu_: the subscriber's CLIENT ID
  uint64_t tracking_on_ = UINT64_MAX;     // guarded by mu_: follower_'s connection with tracking
  int64_t refused_until_ = 0;             // guarded by mu_: monotonic ns
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_REDIS_TRACKING_H_
