// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// One ZooKeeper session of the ZooKeeper store: the C client's handle, what
// its threads report, and bounded calls.
//
// The multi-threaded client runs two threads of its own (I/O and
// completions). Every request here is asynchronous, with a completion that
// fills a `Pending` shared with the caller, who waits for it on a condition
// variable no longer than it chose: a synchronous call could block for as
// long as the client takes to give up on a dead connection (2/3 of the
// session timeout). A caller that stops waiting leaves the request to
// finish on its own; a create that finishes after nobody waits is deleted
// again (`abandoned`), and one whose fate is unknown (connection lost) is
// found by its tag and deleted once the client reconnects
// (`DeleteTaggedLater`, the "protected" creates of Curator): otherwise a
// node nobody knows about would sit in a lock's queue until the session
// ends.
//
// What the client reports arrives on its completion thread: session events
// (connected, disconnected, expired) and watch events (a watched node was
// deleted or changed). They ring `ZkBell`s: a waiter's condition variable,
// or a held lock's eventfd, which the watch on held locks polls.
//
// Liveness. `LastAnsweredSendNanos()` is when the newest request that the
// servers answered was sent. The servers last heard from this session no
// earlier than that, so they cannot expire it before that time plus the
// negotiated session timeout; after it, they may have. The store reports a
// lock lost from then on, whether or not the client has heard of the
// expiry (it hears only when it reconnects).
//
// Caveats: zookeeper_close() must not run on the client's own threads, so
// nothing that a completion owns keeps the session alive (completions hold
// a raw pointer, valid because zookeeper_close() calls every outstanding
// completion before it returns). After fork() the child has the handle but
// not its threads: it must never call the client with it, and never close
// it (closing joins threads that do not exist); `pid()` tells.

#ifndef IPCLOCK_STORES_ZOOKEEPER_SESSION_H_
#define IPCLOCK_STORES_ZOOKEEPER_SESSION_H_

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"
#include "platform/event_signal.h"
#include "platform/zookeeper_calls.h"

namespace ipclock {

// Something to wake: a thread waiting for a watch, or the watch on held
// locks (through an eventfd).
class ZkBell {
 public:
  void Ring();
  // Waits until rung or `deadline`, or until `cancel_fd` (Key::cancel_fd())
  // turns readable; true if rung. Takes the ring.
  bool Wait(Deadline deadline, int cancel_fd = -1);
  // Makes the eventfd that Ring() notifies. Idempotent.
  absl::Status EnableSignal();
  // -1 without EnableSignal().
  int signal_fd();
  // Consumes the eventfd's notifications.
  void DrainSignal();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool rung_ = false;
  std::optional<EventSignal> signal_;
};

struct ZkResult {
  int rc = ZSYSTEMERROR;
  // The servers answered (rc is theirs); false when the connection was lost
  // or the wait ended first: the request may or may not have run.
  bool answered = false;
  std::string path;  // create: the node made
  std::string data;  // get
  bool has_stat = false;
  struct Stat stat = {};
  std::vector<std::string> children;
  std::vector<int> op_rcs;  // multi: each op's result
};

struct ZkOp {
  enum class Kind { kCreate, kDelete, kSet };
  Kind kind = Kind::kDelete;
  std::string path;
  std::string data;  // create, set
  int mode = 0;      // create: ZOO_EPHEMERAL...
  int version = -1;  // delete, set
};

class ZkSession {
 public:
  struct Settings {
    std::string servers;
    absl::Duration session_timeout;
    absl::Duration connect_timeout;
    std::string describe;  // the store, for messages
  };

  // Starts a session and waits up to connect_timeout for it.
  static absl::StatusOr<std::shared_ptr<ZkSession>> Open(const Settings& settings);
  ~ZkSession();
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  // The process that opened it: no other may use it.
  pid_t pid() const { return pid_; }
  // The servers said it expired (or refused it): its ephemeral nodes are
  // gone, and it will not come back.
  bool expired() const { return expired_.load(std::memory_order_acquire); }
  bool connected() const { return connected_.load(std::memory_order_acquire); }
  int64_t id() const { return id_; }
  // The negotiated session timeout.
  absl::Duration timeout() const { return timeout_; }
  int64_t LastAnsweredSendNanos() const {
    return last_answered_sent_.load(std::memory_order_acquire);
  }
  // When the servers may have expired the session, at the earliest.
  int64_t EarliestExpiryNanos() const {
    return LastAnsweredSendNanos() + absl::ToInt64Nanoseconds(timeout_);
  }

  // One request each, waiting up to `wait` for the answer.
  ZkResult Create(const std::string& path, absl::string_view data, int mode,
                  absl::Duration wait);
  ZkResult GetChildren(const std::string& path, absl::Duration wait);
  ZkResult Exists(const std::string& path, bool watch, absl::Duration wait);
  ZkResult Get(const std::string& path, absl::Duration wait);
  ZkResult Set(const std::string& path, absl::string_view data, int version,
               absl::Duration wait);
  ZkResult Delete(const std::string& path, int version, absl::Duration wait);
  ZkResult Multi(const std::vector<ZkOp>& ops, absl::Duration wait);

  // In the background, best effort: the deletes as one multi-op, retried
  // after a reconnection, dropped once the session has expired (which
  // deletes ephemeral nodes anyway).
  void DeleteLater(std::vector<ZkOp> deletes);
  // Deletes the children of `parent` whose lock tag is `tag`, once
  // connected.
  void DeleteTaggedLater(const std::string& parent, const std::string& tag);
  // Deletes `path` if its data is `data` (a node whose create may have run
  // with its answer lost), once connected.
  void DeleteIfDataLater(const std::string& path, const std::string& data);
  // Sets a watch on `path` (exists), ringing its bells at once if the node
  // is already gone.
  void WatchNode(const std::string& path);

  // Bells rung by a watch event on `path` (watches are one-shot: a bell is
  // rung once and dropped), and bells rung by every session event.
  void Listen(const std::string& path, std::shared_ptr<ZkBell> bell);
  void Unlisten(const std::string& path, const ZkBell* bell);
  void ListenSession(std::shared_ptr<ZkBell> bell);
  void UnlistenSession(const ZkBell* bell);

  // Internal: what a request's completion fills, and a background job.
  struct Pending;
  struct Job;

 private:
  friend struct ZkCompletions;
  friend struct ZkJobCompletions;
  explicit ZkSession(const Settings& settings);

  static void OnWatch(zhandle_t* zh, int type, int state, const char* path, void* ctx);
  void HandleEvent(zhandle_t* zh, int type, int state, const char* path);
  void RingPath(const std::string& path);
  void RingSession();
  // Runs queued background jobs; with mu_ held.
  void StartJobsLocked(zhandle_t* zh);
  void StartJob(zhandle_t* zh, std::shared_ptr<Job> job);
  // Starts `job` now if connected, else keeps it for the next connection;
  // drops it once the session expired. Takes mu_.
  void StartOrQueue(std::shared_ptr<Job> job);
  void Answered(int64_t sent_nanos);

  // Sends a request through `start` and waits.
  template <typename Start>
  ZkResult Call(std::shared_ptr<Pending> pending, absl::Duration wait, Start start);

  const Settings settings_;
  const pid_t pid_;
  zhandle_t* zh_ = nullptr;  // set once, before any request
  int64_t id_ = 0;
  absl::Duration timeout_;
  std::atomic<bool> connected_{false};
  std::atomic<bool> expired_{false};
  std::atomic<int64_t> last_answered_sent_{0};

  std::mutex mu_;
  std::condition_variable connected_cv_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<ZkBell>>> path_bells_;
  std::vector<std::shared_ptr<ZkBell>> session_bells_;
  std::vector<std::shared_ptr<Job>> jobs_;  // waiting for a connection
};

// Background work of a session: deletes (as one multi-op), deletes of a
// parent's children that carry a tag, or a delete of a node that holds
// given data.
struct ZkSession::Job {
  std::vector<ZkOp> deletes;
  std::string parent;  // with tag
  std::string tag;
  std::string path;    // with data
  std::string data;
};

// A ZooKeeper result code as text, with its name: "node exists (ZNODEEXISTS)".
std::string ZkErrorText(int rc);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ZOOKEEPER_SESSION_H_
