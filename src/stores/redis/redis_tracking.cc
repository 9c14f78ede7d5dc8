// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/redis/redis_tracking.h"

#include "absl/strings/str_cat.h"
#include "ipclock/spi/deadline.h"

namespace ipclock {

namespace {

// A server that refused tracking is asked again after this long (an ACL
// may change, a server may be upgraded behind a proxy).
constexpr int64_t kRefusalNanos = 60LL * 1000 * 1000 * 1000;

}  // namespace

RedisTracker::RedisTracker(const RedisStoreOptions& options, const std::string& describe)
    : subscriber_(options, describe), follower_(options, describe) {}

bool RedisTracker::Drain(absl::FunctionRef<void(absl::string_view tag)> changed) {
  switch (subscriber_.ReadInvalidations(changed)) {
    case RedisConnection::Pushed::kKeys:
    case RedisConnection::Pushed::kBusy:
      return true;
    case RedisConnection::Pushed::kAll:
    case RedisConnection::Pushed::kBroken:
      return false;
  }
  return false;
}

bool RedisTracker::Follow(absl::string_view tag) {
  std::lock_guard<std::mutex> guard(mu_);
  const int64_t now = Deadline::NowNanos();
  if (now < refused_until_) return false;
  if (subscriber_.invalidations_fd() < 0) {
    absl::StatusOr<int64_t> id = subscriber_.SubscribeToInvalidations();
    if (!id.ok()) {
      if (absl::IsFailedPrecondition(id.status())) refused_until_ = now + kRefusalNanos;
      return false;
    }
    redirect_id_ = absl::StrCat(*id);
    tracking_on_ = UINT64_MAX;  // a new subscriber: redirect to it
  }
  const RedisConnection::Call call{tag};
  // Twice at most: the read may have had to reconnect, which ends tracking.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (follower_.connections() != tracking_on_) {
      absl::StatusOr<RedisReply> on =
          follower_.Command({"CLIENT", "TRACKING", "ON", "REDIRECT", redirect_id_}, call);
      if (!on.ok()) return false;
      if (IsRedisError(on->get())) {
        refused_until_ = now + kRefusalNanos;
        return false;
      }
      tracking_on_ = follower_.connections();
    }
    absl::StatusOr<RedisReply> read = follower_.Command({"EXISTS", tag}, call);
    if (!read.ok() || IsRedisError(read->get())) return false;
    if (follower_.connections() == tracking_on_) return true;
  }
  return false;
}

}  // namespace ipclock
