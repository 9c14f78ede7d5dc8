// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/etcd/etcd_client.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dsn.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "ipclock_config.h"
#include "platform/net_stream.h"
#if IPCLOCK_HAVE_ETCD_TLS
#include "platform/tls_stream.h"
#include "platform/process_id.h"
#endif

namespace ipclock {

namespace {

// Idle connections kept per member.
constexpr size_t kMaxIdlePerEndpoint = 4;

std::string Quote(absl::string_view bytes) { return absl::StrCat("\"", EtcdBytes(bytes), "\""); }

std::string RangeJson(const EtcdRange& r) {
  std::string j = absl::StrCat("{\"key\":", Quote(r.key));
  if (!r.range_end.empty()) absl::StrAppend(&j, ",\"range_end\":", Quote(r.range_end));
  if (r.limit > 0) absl::StrAppend(&j, ",\"limit\":\"", r.limit, "\"");
  if (r.by_create) {
    absl::StrAppend(&j, ",\"sort_target\":\"CREATE\",\"sort_order\":\"",
                    r.descending ? "DESCEND" : "ASCEND", "\"");
  }
  if (r.max_create_revision > 0) {
    absl::StrAppend(&j, ",\"max_create_revision\":\"", r.max_create_revision, "\"");
  }
  if (r.keys_only) absl::StrAppend(&j, ",\"keys_only\":true");
  absl::StrAppend(&j, "}");
  return j;
}

EtcdKv ParseKv(const JsonValue& v) {
  EtcdKv kv;
  // Bytes the gateway would not send as base64 are left empty rather than
  // trusted: a key that does not decode matches nothing of ours.
  if (!absl::Base64Unescape(v.StringOf("key"), &kv.key)) kv.key.clear();
  if (!absl::Base64Unescape(v.StringOf("value"), &kv.value)) kv.value.clear();
  kv.create_revision = v.IntOf("create_revision");
  kv.mod_revision = v.IntOf("mod_revision");
  kv.lease = v.IntOf("lease");
  return kv;
}

EtcdOpResult ParseRangeReply(const JsonValue& v) {
  EtcdOpResult out;
  if (const JsonValue* kvs = v.Find("kvs")) {
    for (const JsonValue& kv : kvs->items()) out.kvs.push_back(ParseKv(kv));
  }
  out.count = v.IntOf("count");
  return out;
}

EtcdOpResult ParseOpReply(const JsonValue& v) {
  if (const JsonValue* r = v.Find("response_range")) return ParseRangeReply(*r);
  EtcdOpResult out;
  if (const JsonValue* d = v.Find("response_delete_range")) out.deleted = d->IntOf("deleted");
  if (const JsonValue* t = v.Find("response_txn")) {
    out.succeeded = t->BoolOf("succeeded");
    if (const JsonValue* rs = t->Find("responses")) {
      for (const JsonValue& r : rs->items()) out.responses.push_back(ParseOpReply(r));
    }
  }
  return out;
}

int64_t RevisionOf(const JsonValue& reply) {
  const JsonValue* header = reply.Find("header");
  return header != nullptr ? header->IntOf("revision") : 0;
}

// The reply's own error, if it has one: the gateway's {"error", "message",
// "code"} object, or an HTTP status that is not 200.
absl::Status ReplyError(int http_status, const JsonValue* reply, absl::string_view path) {
  if (reply != nullptr && reply->Find("code") != nullptr) {
    std::string message = reply->StringOf("message");
    if (message.empty()) message = reply->StringOf("error");
    return EtcdStatus(static_cast<int>(reply->IntOf("code", 2)), message);
  }
  if (http_status == 200) return absl::OkStatus();
  if (http_status == 404) {
    // Another server at that address: configuration, as trying again
    // would find the same one.
    return ConfigurationError(absl::StrCat(
        "the server answered HTTP 404 to POST ", path,
        ": no etcd v3 JSON gateway there (etcd 3.4 or later serves one on its client port)"));
  }
  if (http_status == 503 || http_status == 502 || http_status == 504) {
    return TransientError(absl::StrCat("HTTP ", http_status, " from ", path));
  }
  return UnexpectedError(absl::StrCat("HTTP ", http_status, " from ", path));
}

}  // namespace

absl::Status EtcdStatus(int grpc_code, absl::string_view message) {
  const std::string text = absl::StrCat(message.empty() ? "(no message)" : message,
                                        " (gRPC code ", grpc_code, ")");
  switch (grpc_code) {
    case 1:   // CANCELLED
    case 4:   // DEADLINE_EXCEEDED: "etcdserver: request timed out"
    case 10:  // ABORTED
    case 14:  // UNAVAILABLE: "no leader", "leader changed", a member stopping
      return TransientError(text);
    case 8:  // RESOURCE_EXHAUSTED
      // "too many requests" passes; "database space exceeded" (the NOSPACE
      // alarm) lasts until an operator compacts and disarms it.
      if (absl::StrContains(message, "space exceeded")) return OutOfResourcesError(text);
      return TransientError(text);
    case 7:   // PERMISSION_DENIED
    case 16:  // UNAUTHENTICATED
      return RefusedError(text);
    case 3:
      return ConfigurationError(text);
    case 5:
      return MissingError(text);
    case 9:
      return MisuseError(text);
    case 11:
      return RangeError(text);
    case 12:
      return NotBuiltError(text);
    default:
      return UnexpectedError(text);
  }
}

std::string EtcdBytes(absl::string_view raw) { return absl::Base64Escape(raw); }

// --- Requests ------------------------------------------------------------------

void EtcdOps::Add(const std::string& op) {
  if (!json_.empty()) json_.push_back(',');
  json_ += op;
}

EtcdOps& EtcdOps::Put(absl::string_view key, absl::string_view value, int64_t lease) {
  std::string op = absl::StrCat("{\"request_put\":{\"key\":", Quote(key), ",\"value\":", Quote(value));
  if (lease != 0) absl::StrAppend(&op, ",\"lease\":\"", lease, "\"");
  absl::StrAppend(&op, "}}");
  Add(op);
  return *this;
}

EtcdOps& EtcdOps::Get(const EtcdRange& range) {
  Add(absl::StrCat("{\"request_range\":", RangeJson(range), "}"));
  return *this;
}

EtcdOps& EtcdOps::Delete(absl::string_view key) {
  Add(absl::StrCat("{\"request_delete_range\":{\"key\":", Quote(key), "}}"));
  return *this;
}

EtcdOps& EtcdOps::Txn(const EtcdTxn& txn) {
  Add(absl::StrCat("{\"request_txn\":", txn.Json(), "}"));
  return *this;
}

EtcdTxn& EtcdTxn::IfCreate(absl::string_view key, absl::string_view result, int64_t revision,
                           absl::string_view range_end) {
  if (!compares_.empty()) compares_.push_back(',');
  absl::StrAppend(&compares_, "{\"target\":\"CREATE\",\"result\":\"", result,
                  "\",\"key\":", Quote(key));
  if (!range_end.empty()) absl::StrAppend(&compares_, ",\"range_end\":", Quote(range_end));
  absl::StrAppend(&compares_, ",\"create_revision\":\"", revision, "\"}");
  return *this;
}

EtcdTxn& EtcdTxn::IfValue(absl::string_view key, absl::string_view result,
                          absl::string_view value) {
  if (!compares_.empty()) compares_.push_back(',');
  absl::StrAppend(&compares_, "{\"target\":\"VALUE\",\"result\":\"", result,
                  "\",\"key\":", Quote(key), ",\"value\":", Quote(value), "}");
  return *this;
}

std::string EtcdTxn::Json() const {
  return absl::StrCat("{\"compare\":[", compares_, "],\"success\":[", then_.json(),
                      "],\"failure\":[", else_.json(), "]}");
}

// --- The client -------------------------------------------------------------------

EtcdClient::EtcdClient(EtcdClientSettings settings)
    : settings_(std::move(settings)), pid_(CurrentPid()), idle_(settings_.endpoints.size()) {}

EtcdClient::~EtcdClient() = default;

std::string EtcdClient::CurrentEndpoint() const {
  const EtcdEndpoint& e = settings_.endpoints[current_.load() % settings_.endpoints.size()];
  return HostPort(e.host, e.port);
}

void EtcdClient::MoveOn(size_t from) {
  size_t expected = from;
  current_.compare_exchange_strong(expected, (from + 1) % settings_.endpoints.size());
}

std::unique_ptr<HttpConnection> EtcdClient::TakeIdle(size_t endpoint) {
  std::vector<std::unique_ptr<HttpConnection>> dropped;  // closed after the mutex
  std::lock_guard<std::mutex> guard(mu_);
  if (pid_ != CurrentPid()) {
    // A forked child: these are the parent's connections.
    for (auto& list : idle_) {
      for (auto& c : list) dropped.push_back(std::move(c));
      list.clear();
    }
    pid_ = CurrentPid();
  }
  auto& list = idle_[endpoint];
  while (!list.empty()) {
    std::unique_ptr<HttpConnection> c = std::move(list.back());
    list.pop_back();
    // An idle connection with input has been closed by the server (or is
    // out of step): never reuse it.
    if (c->usable() && !c->HasInput()) return c;
    dropped.push_back(std::move(c));
  }
  return nullptr;
}

void EtcdClient::PutIdle(size_t endpoint, std::unique_ptr<HttpConnection> conn) {
  if (!conn->usable() || !conn->stream().ours()) return;
  std::lock_guard<std::mutex> guard(mu_);
  if (pid_ == CurrentPid() && idle_[endpoint].size() < kMaxIdlePerEndpoint) {
    idle_[endpoint].push_back(std::move(conn));
  }
}

absl::StatusOr<std::unique_ptr<HttpConnection>> EtcdClient::Connect(size_t endpoint,
                                                                    Deadline deadline) {
  const EtcdEndpoint& e = settings_.endpoints[endpoint];
  const Deadline connect_by = std::min(deadline, Deadline::In(settings_.connect_timeout));
  absl::StatusOr<std::unique_ptr<ByteStream>> stream;
#if IPCLOCK_HAVE_ETCD_TLS
  if (settings_.tls != nullptr) {
    stream = ConnectTls(e.host, e.port, settings_.tls, ForPlatform(connect_by));
  } else {
    stream = ConnectTcp(e.host, e.port, ForPlatform(connect_by));
  }
#else
  stream = ConnectTcp(e.host, e.port, ForPlatform(connect_by));
#endif
  if (!stream.ok()) return stream.status();
  return std::make_unique<HttpConnection>(*std::move(stream), HostPort(e.host, e.port));
}

absl::StatusOr<JsonValue> EtcdClient::Call(absl::string_view path, const std::string& body,
                                           Deadline deadline, bool retry_anywhere, bool* sent) {
  *sent = false;
  const size_t n = settings_.endpoints.size();
  absl::Status last;
  for (size_t tried = 0; tried < n; ++tried) {
    const size_t idx = current_.load() % n;
    const std::string where = CurrentEndpoint();
    std::unique_ptr<HttpConnection> conn = TakeIdle(idx);
    const bool fresh_connection = conn == nullptr;
    if (conn == nullptr) {
      absl::StatusOr<std::unique_ptr<HttpConnection>> fresh = Connect(idx, deadline);
      if (!fresh.ok()) {
        last = Restated(fresh.status(), absl::StrCat(where, ": ", fresh.status().message()));
        // A refused certificate or an unknown name is not the member's
        // passing fault, but another member may still serve.
        MoveOn(idx);
        if (deadline.has_passed()) break;
        continue;
      }
      conn = *std::move(fresh);
    }
    bool sent_now = false;
    absl::StatusOr<HttpReply> reply = conn->Post(path, body, deadline, &sent_now);
    if (!reply.ok()) {
      *sent = *sent || sent_now;
      if (fresh_connection && settings_.tls == nullptr &&
          absl::StrContains(reply.status().message(), "closed the connection") &&
          ProbeProtocol(settings_.endpoints[idx].host, settings_.endpoints[idx].port,
                        ForPlatform(deadline)) == WireProtocol::kTls) {
        // etcd hangs up on plain HTTP at a TLS port: configuration, not a
        // passing fault.
        return ConfigurationError(
            absl::StrCat(where, ": the member speaks TLS on this port: use etcds://"));
      }
      last = TransientError(absl::StrCat(where, ": ", reply.status().message()));
      MoveOn(idx);
      if ((sent_now && !retry_anywhere) || deadline.has_passed()) break;
      continue;
    }
    *sent = true;
    PutIdle(idx, std::move(conn));
    absl::StatusOr<JsonValue> parsed = JsonValue::Parse(reply->body);
    if (!parsed.ok()) {
      if (reply->status != 200) return ReplyError(reply->status, nullptr, path);
      return UnexpectedError(absl::StrCat(where, ": the reply to ", path,
                                          " is not JSON: ", parsed.status().message()));
    }
    absl::Status error = ReplyError(reply->status, &*parsed, path);
    if (error.ok()) return parsed;
    last = Restated(error, absl::StrCat(where, ": ", error.message()));
    // A member without a leader (or being stopped) may be the only one cut
    // off: the next request goes to another.
    if (absl::IsUnavailable(error)) MoveOn(idx);
    if (!absl::IsUnavailable(error) || !retry_anywhere || deadline.has_passed()) break;
  }
  return last;
}

absl::StatusOr<EtcdTxnResult> EtcdClient::Txn(const EtcdTxn& txn, Deadline deadline,
                                              bool* unknown) {
  bool sent = false;
  absl::StatusOr<JsonValue> reply = Call("/v3/kv/txn", txn.Json(), deadline, false, &sent);
  *unknown = false;
  if (!reply.ok()) {
    // Sent and not answered, or answered "timed out" / "unavailable": the
    // proposal may still be applied.
    *unknown = sent && absl::IsUnavailable(reply.status());
    return reply.status();
  }
  EtcdTxnResult out;
  out.revision = RevisionOf(*reply);
  out.succeeded = reply->BoolOf("succeeded");
  if (const JsonValue* rs = reply->Find("responses")) {
    for (const JsonValue& r : rs->items()) out.responses.push_back(ParseOpReply(r));
  }
  return out;
}

absl::StatusOr<EtcdOpResult> EtcdClient::Get(const EtcdRange& range, Deadline deadline) {
  bool sent = false;
  absl::StatusOr<JsonValue> reply = Call("/v3/kv/range", RangeJson(range), deadline, true, &sent);
  if (!reply.ok()) return reply.status();
  return ParseRangeReply(*reply);
}

absl::StatusOr<EtcdLeaseGrant> EtcdClient::LeaseGrant(int64_t ttl_seconds, Deadline deadline) {
  bool sent = false;
  absl::StatusOr<JsonValue> reply =
      Call("/v3/lease/grant", absl::StrCat("{\"TTL\":\"", ttl_seconds, "\"}"), deadline, true,
           &sent);
  if (!reply.ok()) return reply.status();
  if (!reply->StringOf("error").empty()) {
    return UnexpectedError(absl::StrCat("lease grant: ", reply->StringOf("error")));
  }
  EtcdLeaseGrant out;
  out.id = reply->IntOf("ID");
  out.ttl = reply->IntOf("TTL");
  if (out.id == 0 || out.ttl <= 0) {
    return UnexpectedError("lease grant: a reply without a lease ID or TTL");
  }
  return out;
}

absl::StatusOr<int64_t> EtcdClient::LeaseKeepAlive(int64_t id, Deadline deadline) {
  bool sent = false;
  absl::StatusOr<JsonValue> reply = Call(
      "/v3/lease/keepalive", absl::StrCat("{\"ID\":\"", id, "\"}"), deadline, true, &sent);
  if (!reply.ok()) return reply.status();
  // A stream of one reply: {"result": {...}}, or {"error": {...}}.
  if (const JsonValue* e = reply->Find("error")) {
    return EtcdStatus(static_cast<int>(e->IntOf("grpc_code", 2)), e->StringOf("message"));
  }
  const JsonValue* result = reply->Find("result");
  if (result == nullptr) return UnexpectedError("lease keep-alive: a reply without a result");
  return result->IntOf("TTL");
}

absl::Status EtcdClient::LeaseRevoke(int64_t id, Deadline deadline) {
  bool sent = false;
  absl::StatusOr<JsonValue> reply =
      Call("/v3/lease/revoke", absl::StrCat("{\"ID\":\"", id, "\"}"), deadline, true, &sent);
  return reply.status();
}

absl::StatusOr<EtcdLeaseInfo> EtcdClient::LeaseTimeToLive(int64_t id, Deadline deadline) {
  bool sent = false;
  absl::StatusOr<JsonValue> reply = Call(
      "/v3/lease/timetolive", absl::StrCat("{\"ID\":\"", id, "\"}"), deadline, true, &sent);
  if (!reply.ok()) return reply.status();
  EtcdLeaseInfo out;
  out.ttl = reply->IntOf("TTL", 0);
  out.granted_ttl = reply->IntOf("grantedTTL", 0);
  return out;
}

absl::StatusOr<std::unique_ptr<EtcdWatch>> EtcdClient::WatchDeletes(absl::string_view key,
                                                                    int64_t start_revision,
                                                                    Deadline deadline) {
  const std::string body = absl::StrCat(
      "{\"create_request\":{\"key\":", Quote(key),
      start_revision > 0 ? absl::StrCat(",\"start_revision\":\"", start_revision, "\"")
                         : std::string(),
      ",\"filters\":[\"NOPUT\"]}}");
  return OpenWatch(body, start_revision == 0, deadline);
}

absl::StatusOr<std::unique_ptr<EtcdWatch>> EtcdClient::WatchHistory(absl::string_view key,
                                                                    absl::string_view range_end,
                                                                    int64_t start_revision,
                                                                    Deadline deadline) {
  const std::string body = absl::StrCat("{\"create_request\":{\"key\":", Quote(key),
                                        ",\"range_end\":", Quote(range_end),
                                        ",\"start_revision\":\"", start_revision,
                                        "\",\"prev_kv\":true}}");
  return OpenWatch(body, false, deadline);
}

absl::StatusOr<std::unique_ptr<EtcdWatch>> EtcdClient::OpenWatch(const std::string& body,
                                                                 bool await_created,
                                                                 Deadline deadline) {
  const size_t n = settings_.endpoints.size();
  absl::Status last;
  for (size_t tried = 0; tried < n; ++tried) {
    const size_t idx = current_.load() % n;
    const std::string where = CurrentEndpoint();
    absl::StatusOr<std::unique_ptr<HttpConnection>> conn = Connect(idx, deadline);
    if (!conn.ok()) {
      last = Restated(conn.status(), absl::StrCat(where, ": ", conn.status().message()));
      MoveOn(idx);
      if (deadline.has_passed()) break;
      continue;
    }
    std::string error_body;
    absl::StatusOr<int> status = (*conn)->StartStream("/v3/watch", body, deadline, &error_body);
    if (!status.ok() || *status != 200) {
      absl::Status s = status.ok() ? ReplyError(*status, nullptr, "/v3/watch") : status.status();
      if (status.ok()) {
        absl::StatusOr<JsonValue> parsed = JsonValue::Parse(error_body);
        if (parsed.ok()) s = ReplyError(*status, &*parsed, "/v3/watch");
      }
      last = Restated(s, absl::StrCat(where, ": watch: ", s.message()));
      MoveOn(idx);
      if (!absl::IsUnavailable(s) || deadline.has_passed()) break;
      continue;
    }
    auto watch = std::make_unique<EtcdWatch>(*std::move(conn));
    if (await_created) {
      if (absl::Status s = watch->AwaitCreated(deadline); !s.ok()) {
        return Restated(s, absl::StrCat(where, ": watch: ", s.message()));
      }
    }
    return watch;
  }
  return last;
}

absl::Status EtcdWatch::Read(Deadline deadline, std::vector<EtcdEvent>* events,
                             bool* created) {
  absl::StatusOr<std::vector<std::string>> messages = conn_->ReadMessages(deadline);
  if (!messages.ok()) return messages.status();
  for (const std::string& m : *messages) {
    absl::StatusOr<JsonValue> parsed = JsonValue::Parse(m);
    if (!parsed.ok()) {
      return UnexpectedError(absl::StrCat("watch: a message that is not JSON: ",
                                          parsed.status().message()));
    }
    if (const JsonValue* e = parsed->Find("error")) {
      return TransientError(absl::StrCat("watch: ", e->StringOf("message")));
    }
    const JsonValue* r = parsed->Find("result");
    if (r == nullptr) continue;
    if (r->BoolOf("canceled")) {
      const int64_t compacted = r->IntOf("compact_revision");
      const std::string reason = r->StringOf("cancel_reason");
      return TransientError(absl::StrCat(
          "etcd cancelled the watch",
          compacted > 0 ? absl::StrCat(" (history compacted to revision ", compacted, ")")
                        : std::string(),
          reason.empty() ? std::string() : absl::StrCat(": ", reason)));
    }
    if (r->BoolOf("created")) *created = true;
    if (const JsonValue* evs = r->Find("events")) {
      for (const JsonValue& ev : evs->items()) {
        EtcdEvent out;
        out.deleted = ev.StringOf("type") == "DELETE";
        if (const JsonValue* kv = ev.Find("kv")) out.kv = ParseKv(*kv);
        if (const JsonValue* kv = ev.Find("prev_kv")) out.prev_kv = ParseKv(*kv);
        events->push_back(std::move(out));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status EtcdWatch::AwaitCreated(Deadline deadline) {
  bool created = false;
  while (!created) {
    if (absl::Status s = Read(deadline, &early_, &created); !s.ok()) return s;
    if (!created && deadline.has_passed()) {
      return TransientError("etcd did not confirm the watch in time");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<EtcdEvent>> EtcdWatch::Next(Deadline deadline) {
  std::vector<EtcdEvent> events;
  events.swap(early_);
  if (!events.empty()) return events;
  bool created = false;
  if (absl::Status s = Read(deadline, &events, &created); !s.ok()) return s;
  return events;
}

}  // namespace ipclock
