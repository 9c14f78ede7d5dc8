// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "etcd_peers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ipclock_bench {

namespace {

// One kept-alive connection to 127.0.0.1:port (the bench's members run on
// loopback) speaking just enough HTTP/1.1 for the gateway's replies.
class RawGateway {
 public:
  ~RawGateway() {
    if (fd_ >= 0) close(fd_);
  }
  bool Connect(const std::string& dsn, std::string* why) {
    // etcd://127.0.0.1:PORT[,...][/...]
    const size_t colon = dsn.find(':', dsn.find("//") + 2);
    if (dsn.rfind("etcd://", 0) != 0 || colon == std::string::npos ||
        !absl::SimpleAtoi(dsn.substr(colon + 1, dsn.find_first_of(",/?", colon) - colon - 1),
                          &port_)) {
      *why = "expected etcd://127.0.0.1:PORT";
      return false;
    }
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<struct sockaddr*>(&a), sizeof(a)) != 0) {
      *why = "cannot connect to the member";
      return false;
    }
    const int on = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    return true;
  }
  // POSTs and reads the reply's body; false on any failure or status.
  bool Post(const std::string& path, const std::string& body, std::string* reply) {
    const std::string req =
        absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: 127.0.0.1:", port_,
                     "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
                     "\r\n\r\n", body);
    if (send(fd_, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
      return false;
    }
    size_t head_end;
    while ((head_end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return false;
    }
    if (buf_.compare(0, 12, "HTTP/1.1 200") != 0) return false;
    const size_t cl = buf_.find("Content-Length: ");
    int64_t length = 0;
    if (cl == std::string::npos || cl > head_end ||
        !absl::SimpleAtoi(buf_.substr(cl + 16, buf_.find("\r\n", cl) - cl - 16), &length)) {
      return false;
    }
    while (buf_.size() < head_end + 4 + static_cast<size_t>(length)) {
      if (!Fill()) return false;
    }
    reply->assign(buf_, head_end + 4, static_cast<size_t>(length));
    buf_.erase(0, head_end + 4 + static_cast<size_t>(length));
    return true;
  }

 private:
  bool Fill() {
    char chunk[4096];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buf_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  int port_ = 0;
  std::string buf_;
};

std::string B64(const std::string& s) { return absl::Base64Escape(s); }

// The median ns of `requests()`, one call an operation: false if a request
// failed, and then the figure is -1 with `*why` set to `failure`.
template <typename Requests>
double MedianNsPerRequests(const RunShape& shape, Requests requests, const char* failure,
                           std::string* why) {
  const double ns = MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (!requests()) return false;
    }
    return true;
  });
  if (ns < 0) *why = failure;
  return ns;
}

}  // namespace

double EtcdRange(const RunShape& shape, const std::string& dsn, std::string* why) {
  RawGateway gw;
  if (!gw.Connect(dsn, why)) return -1;
  const std::string body =
      absl::StrCat("{\"key\":\"", B64(absl::StrCat("ipclock-bench-floor-", getpid())), "\"}");
  std::string reply;
  return MedianNsPerRequests(
      shape, [&] { return gw.Post("/v3/kv/range", body, &reply); }, "a range request failed",
      why);
}

double EtcdPutDelete(const RunShape& shape, const std::string& dsn, std::string* why) {
  RawGateway gw;
  if (!gw.Connect(dsn, why)) return -1;
  const std::string key = B64(absl::StrCat("ipclock-bench-floor-", getpid(), "/k"));
  const std::string put = absl::StrCat(
      "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"EQUAL\",\"key\":\"", key,
      "\",\"create_revision\":\"0\"}],\"success\":[{\"request_put\":{\"key\":\"", key,
      "\",\"value\":\"\"}}]}");
  const std::string del = absl::StrCat("{\"key\":\"", key, "\"}");
  std::string reply;
  return MedianNsPerRequests(
      shape,
      [&] {
        return gw.Post("/v3/kv/txn", put, &reply) && gw.Post("/v3/kv/deleterange", del, &reply);
      },
      "a put or delete failed", why);
}

double EtcdLockTransactions(const RunShape& shape, const std::string& dsn, std::string* why) {
  RawGateway gw;
  if (!gw.Connect(dsn, why)) return -1;
  std::string reply;
  if (!gw.Post("/v3/lease/grant", "{\"TTL\":\"60\"}", &reply)) {
    *why = "lease grant failed";
    return -1;
  }
  const size_t id_at = reply.find("\"ID\":\"");
  if (id_at == std::string::npos) {
    *why = "no lease ID in the grant's reply";
    return -1;
  }
  const std::string lease = reply.substr(id_at + 6, reply.find('"', id_at + 6) - id_at - 6);
  const std::string pfx = absl::StrCat("ipclock-bench-floor-", getpid(), "/job");
  const std::string record = B64(pfx);
  const std::string queue = B64(pfx + "/");
  const std::string queue_end = B64(pfx + "0");
  const std::string key = B64(pfx + "/abc");
  const std::string owner = B64(pfx + "/abc ipclock host=bench pid=1");
  const std::string acquire = absl::StrCat(
      "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"EQUAL\",\"key\":\"", queue,
      "\",\"range_end\":\"", queue_end, "\",\"create_revision\":\"0\"}],\"success\":[",
      "{\"request_range\":{\"key\":\"", record, "\"}},",
      "{\"request_put\":{\"key\":\"", key, "\",\"value\":\"\",\"lease\":\"", lease, "\"}},",
      "{\"request_put\":{\"key\":\"", record, "\",\"value\":\"", owner, "\"}}],\"failure\":[]}");
  const std::string release = absl::StrCat(
      "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"GREATER\",\"key\":\"", key,
      "\",\"create_revision\":\"0\"}],\"success\":[{\"request_delete_range\":{\"key\":\"",
      key, "\"}},{\"request_txn\":{\"compare\":[{\"target\":\"VALUE\",\"result\":\"EQUAL\","
      "\"key\":\"", record, "\",\"value\":\"", owner, "\"}],\"success\":[",
      "{\"request_delete_range\":{\"key\":\"", record, "\"}}],\"failure\":[]}}],\"failure\":[]}");
  const double ns = MedianNsPerRequests(
      shape,
      [&] {
        return gw.Post("/v3/kv/txn", acquire, &reply) &&
               reply.find("\"succeeded\":true") != std::string::npos &&
               gw.Post("/v3/kv/txn", release, &reply);
      },
      "a transaction failed", why);
  gw.Post("/v3/lease/revoke", absl::StrCat("{\"ID\":\"", lease, "\"}"), &reply);
  return ns;
}

}  // namespace ipclock_bench
