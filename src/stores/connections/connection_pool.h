// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Idle database connections kept by a store for its next statement or lock.
// Only connections of this process are handed out: after fork() the pool's
// connections are the parent's, and the child opens its own.

#ifndef IPCLOCK_STORES_CONNECTION_POOL_H_
#define IPCLOCK_STORES_CONNECTION_POOL_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "platform/process_id.h"

namespace ipclock {

// `Conn` is movable and has `bool ours() const` (opened by this process)
// and `bool looks_alive() const` (no failure seen, no round trip). Its
// destructor closes it, and must be safe for an inherited connection.
template <typename Conn>
class ConnectionPool {
 public:
  explicit ConnectionPool(size_t max_idle) : max_idle_(max_idle), pid_(CurrentPid()) {}

  // An idle connection that looks alive, or nullopt. Dead ones found on the
  // way are closed.
  std::optional<Conn> Take() {
    std::vector<Conn> dropped;  // closed after the mutex is let go
    std::lock_guard<std::mutex> guard(mu_);
    if (pid_ != CurrentPid()) {
      dropped.swap(idle_);
      pid_ = CurrentPid();
    }
    while (!idle_.empty()) {
      Conn c = std::move(idle_.back());
      idle_.pop_back();
      if (c.looks_alive()) return c;
      dropped.push_back(std::move(c));
    }
    return std::nullopt;
  }

  // Take(), or else the connection that `connect()` opens (it returns an
  // absl::StatusOr of a Conn, or of what makes one). `*pooled`, when given,
  // says whether the connection came from the pool.
  template <typename Connect>
  absl::StatusOr<Conn> TakeOrConnect(Connect connect, bool* pooled = nullptr) {
    std::optional<Conn> idle = Take();
    if (pooled != nullptr) *pooled = idle.has_value();
    if (idle) return *std::move(idle);
    return absl::StatusOr<Conn>(connect());
  }
  // Keeps `conn` for reuse if it is ours, looks alive and there is room;
  // closes it otherwise. The caller must hand back only connections in a
  // clean state (no statement in flight, no lock held).
  void Put(Conn conn) {
    if (!conn.ours() || !conn.looks_alive()) return;
    std::lock_guard<std::mutex> guard(mu_);
    if (pid_ == CurrentPid() && idle_.size() < max_idle_) idle_.push_back(std::move(conn));
    // Otherwise `conn` is closed on return, after the guard: its goodbye
    // to the server is one small write.
  }

 private:
  const size_t max_idle_;
  std::mutex mu_;
  std::vector<Conn> idle_;  // guarded by mu_
  pid_t pid_;               // guarded by mu_
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_CONNECTION_POOL_H_
