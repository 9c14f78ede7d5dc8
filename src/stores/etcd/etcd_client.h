// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// etcd's v3 API as the etcd store uses it, spoken as JSON over HTTP/1.1 to
// the gRPC gateway that every etcd member (3.4 and later) serves on its
// client port: transactions, ranges, leases and watches. Why not gRPC:
// doc/stores.md ("etcd: the client").
//
// An `EtcdClient` keeps idle connections (per process: a forked child
// never writes to its parent's) to a list of members, and talks to one at
// a time: a member that cannot be reached, or that answers that it has no
// leader, sends the next request to the next member.
//
// Every failure is classed here, once (`EtcdStatus`): Unavailable for
// what may pass (no connection, a member without a leader, a request that
// timed out, "too many requests"), PermissionDenied for refused
// credentials or TLS, InvalidArgument for a request etcd found malformed,
// NotFound for a lease that no longer exists, ResourceExhausted for a
// cluster out of space (an alarm an operator must clear).
//
// Outcomes. A write whose reply never came may or may not have been
// applied: `Txn()` then says so through `*unknown`, and the caller must
// find out (the etcd store deletes what it may have written). Requests
// that change nothing, and lease keep-alives, are sent to another member
// when one fails.

#ifndef IPCLOCK_STORES_ETCD_CLIENT_H_
#define IPCLOCK_STORES_ETCD_CLIENT_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"
#include "stores/etcd/etcd_http.h"
#include "stores/etcd/etcd_json.h"

namespace ipclock {

class TlsClientConfig;

struct EtcdEndpoint {
  std::string host;  // a name, an IPv4 address or an IPv6 address (no brackets)
  int port = 2379;
};

struct EtcdClientSettings {
  std::vector<EtcdEndpoint> endpoints;
  // TLS for every connection; null for plain TCP.
  std::shared_ptr<const TlsClientConfig> tls;
  absl::Duration connect_timeout = absl::Seconds(5);
};

// A key as etcd returns it.
struct EtcdKv {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t lease = 0;
};

// A range request: `key` alone, or every key in [key, range_end).
struct EtcdRange {
  std::string key;
  std::string range_end;
  int64_t limit = 0;
  // Sorted by creation revision; unsorted (by key) when false.
  bool by_create = false;
  bool descending = false;
  // Only keys created at or before this revision (0: no bound).
  int64_t max_create_revision = 0;
  bool keys_only = false;
};

// The operations of a transaction's branches.
class EtcdOps {
 public:
  EtcdOps& Put(absl::string_view key, absl::string_view value, int64_t lease);
  EtcdOps& Get(const EtcdRange& range);
  EtcdOps& Delete(absl::string_view key);
  // A nested transaction (etcd >= 3.3).
  EtcdOps& Txn(const class EtcdTxn& txn);
  bool empty() const { return json_.empty(); }
  const std::string& json() const { return json_; }

 private:
  void Add(const std::string& op);
  std::string json_;  // comma-separated RequestOps
};

// If every compare holds, the `then` operations run; else the `otherwise`
// ones. One revision for all of it.
class EtcdTxn {
 public:
  // The create revision of `key` (0: the key does not exist), or of every
  // key in [key, range_end) (an empty range compares as one absent key).
  // `result`: "EQUAL", "GREATER", "LESS" or "NOT_EQUAL".
  EtcdTxn& IfCreate(absl::string_view key, absl::string_view result, int64_t revision,
                    absl::string_view range_end = absl::string_view());
  EtcdTxn& IfValue(absl::string_view key, absl::string_view result, absl::string_view value);
  EtcdOps& then() { return then_; }
  EtcdOps& otherwise() { return else_; }
  std::string Json() const;

 private:
  std::string compares_;
  EtcdOps then_;
  EtcdOps else_;
};

// One operation's reply: the keys of a Get (count: how many matched before
// the limit), what a Delete deleted, a nested transaction's replies.
struct EtcdOpResult {
  std::vector<EtcdKv> kvs;
  int64_t count = 0;
  int64_t deleted = 0;
  bool succeeded = false;  // a nested transaction
  std::vector<EtcdOpResult> responses;
};

struct EtcdTxnResult {
  int64_t revision = 0;  // the store's revision after it (the header's)
  bool succeeded = false;
  std::vector<EtcdOpResult> responses;
};

struct EtcdLeaseGrant {
  int64_t id = 0;
  int64_t ttl = 0;  // seconds, as the cluster granted (at least its minimum)
};

struct EtcdLeaseInfo {
  int64_t ttl = -1;  // seconds left; -1: the lease does not exist
  int64_t granted_ttl = 0;
};

struct EtcdEvent {
  bool deleted = false;  // else a put
  EtcdKv kv;             // a deletion's: the key, and the revision that deleted it
  EtcdKv prev_kv;        // the key as it was, where the watch asked for it
};

// The failure that the gateway reported (its gRPC code and message), as a
// status whose message says what etcd said: the one place etcd's errors
// are classed.
absl::Status EtcdStatus(int grpc_code, absl::string_view message);

class EtcdWatch;

class EtcdClient {
 public:
  explicit EtcdClient(EtcdClientSettings settings);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // `*unknown` (always set) is true when the transaction may have been
  // applied although an error is returned.
  absl::StatusOr<EtcdTxnResult> Txn(const EtcdTxn& txn, Deadline deadline, bool* unknown);
  // A linearizable read: a member cut off from the leader fails it.
  absl::StatusOr<EtcdOpResult> Get(const EtcdRange& range, Deadline deadline);
  absl::StatusOr<EtcdLeaseGrant> LeaseGrant(int64_t ttl_seconds, Deadline deadline);
  // The lease's TTL after the renewal; 0 when the lease no longer exists.
  absl::StatusOr<int64_t> LeaseKeepAlive(int64_t id, Deadline deadline);
  absl::Status LeaseRevoke(int64_t id, Deadline deadline);
  absl::StatusOr<EtcdLeaseInfo> LeaseTimeToLive(int64_t id, Deadline deadline);
  // Deletions of `key` from `start_revision` on (puts are filtered out), on
  // a connection of the watch's own. A deletion at or after
  // `start_revision` is reported even if it came before this returns.
  // Caveat: etcd serves a watch that starts at a past revision from a
  // catch-up loop that runs every 100 ms, so its events may come that much
  // late. A `start_revision` of 0 watches from now, is never late, and
  // returns once etcd confirmed the watch: a deletion after that is
  // reported.
  absl::StatusOr<std::unique_ptr<EtcdWatch>> WatchDeletes(absl::string_view key,
                                                          int64_t start_revision,
                                                          Deadline deadline);
  // Every put and deletion of the keys in [key, range_end) from
  // `start_revision` (> 0) on, in revision order, each deletion with the
  // key as it was (`prev_kv`). Unavailable from `EtcdWatch::Next()` when
  // etcd compacted that history away.
  absl::StatusOr<std::unique_ptr<EtcdWatch>> WatchHistory(absl::string_view key,
                                                          absl::string_view range_end,
                                                          int64_t start_revision,
                                                          Deadline deadline);

  // The member requests go to now, as "host:port".
  std::string CurrentEndpoint() const;

 private:
  // POSTs to the current member, moving on to the next on a transport
  // failure before anything was sent, and, when `retry_anywhere`, after any
  // transport failure or a member's "no leader". The parsed reply, or the
  // failure (`*sent`: the request may have reached a member).
  absl::StatusOr<JsonValue> Call(absl::string_view path, const std::string& body,
                                 Deadline deadline, bool retry_anywhere, bool* sent);
  // Opens the watch `body` asks for, on the first member that takes it;
  // `await_created`: returns once etcd confirmed it.
  absl::StatusOr<std::unique_ptr<EtcdWatch>> OpenWatch(const std::string& body,
                                                       bool await_created, Deadline deadline);
  absl::StatusOr<std::unique_ptr<HttpConnection>> Connect(size_t endpoint, Deadline deadline);
  std::unique_ptr<HttpConnection> TakeIdle(size_t endpoint);
  void PutIdle(size_t endpoint, std::unique_ptr<HttpConnection> conn);
  void MoveOn(size_t from);

  const EtcdClientSettings settings_;
  std::atomic<size_t> current_{0};
  std::mutex mu_;
  pid_t pid_;                                                     // guarded by mu_
  std::vector<std::vector<std::unique_ptr<HttpConnection>>> idle_;  // guarded by mu_
};

// A watch's connection: the events etcd sends on it. Its descriptor turns
// readable when events (or the end of the stream) arrive.
class EtcdWatch {
 public:
  explicit EtcdWatch(std::unique_ptr<HttpConnection> conn) : conn_(std::move(conn)) {}
  int fd() const { return conn_->stream().fd(); }
  ByteStream& stream() { return conn_->stream(); }
  // Something arrived that `Next()` has not taken (or the stream ended).
  bool HasInput() const { return conn_->HasInput(); }
  // The events that arrived by `deadline` (waiting until then for the
  // first; a past deadline takes what is there). Unavailable once the
  // stream ended, failed, or etcd cancelled the watch (a compacted start
  // revision, a member going down): the watcher must look again itself.
  absl::StatusOr<std::vector<EtcdEvent>> Next(Deadline deadline);
  // Reads until etcd confirmed the watch (events that come first are kept
  // for Next()). Unavailable as for Next(), or when `deadline` passed.
  absl::Status AwaitCreated(Deadline deadline);

 private:
  // Parses what arrived by `deadline` into `*events`; sets `*created` at
  // the confirmation of the watch.
  absl::Status Read(Deadline deadline, std::vector<EtcdEvent>* events, bool* created);

  std::unique_ptr<HttpConnection> conn_;
  std::vector<EtcdEvent> early_;
};

// Base64 of a key or value, as the gateway takes bytes.
std::string EtcdBytes(absl::string_view raw);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ETCD_CLIENT_H_
