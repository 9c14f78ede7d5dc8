// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes what the etcd store reads from the network: a reply of etcd's JSON
// gateway, as bytes a server (or something pretending to be one) sends. The
// first byte picks what the rest is:
//   0: a JSON document for JsonValue::Parse() and its accessors;
//   1: an HTTP/1.1 reply to a POST (head, Content-Length or chunked body),
//      handed over in pieces of the sizes the second byte picks;
//   2: a streamed reply (a watch): the head, then chunks of newline-
//      separated messages, read until the stream ends or fails.
// No socket is opened: a stream over the input stands in for one.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "ipclock/spi/deadline.h"
#include "platform/net_stream.h"
#include "stores/etcd/etcd_http.h"
#include "stores/etcd/etcd_json.h"

namespace {

class InputStream final : public ipclock::ByteStream {
 public:
  InputStream(absl::string_view data, size_t piece)
      : ByteStream(-1), data_(data), piece_(piece == 0 ? 1 : piece) {}
  absl::Status Write(absl::string_view, ipclock::MonotonicDeadline) override {
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> Read(char* buf, size_t len, ipclock::MonotonicDeadline) override {
    const size_t n = std::min({len, piece_, data_.size()});
    memcpy(buf, data_.data(), n);
    data_.remove_prefix(n);
    return n;  // 0 at the end: the server closed the connection
  }

 private:
  absl::string_view data_;
  size_t piece_;
};

void Walk(const ipclock::JsonValue& v, int depth) {
  if (depth > 80) return;
  (void)v.AsInt();
  (void)v.IntOf("revision");
  (void)v.StringOf("key");
  (void)v.BoolOf("succeeded");
  for (const ipclock::JsonValue& item : v.items()) Walk(item, depth + 1);
  if (const ipclock::JsonValue* m = v.Find("result")) Walk(*m, depth + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const size_t piece = data[1] % 64 + 1;
  switch (data[0] % 3) {
    case 0: {
      absl::StatusOr<ipclock::JsonValue> v = ipclock::JsonValue::Parse(rest);
      if (v.ok()) Walk(*v, 0);
      break;
    }
    case 1: {
      ipclock::HttpConnection conn(std::make_unique<InputStream>(rest, piece), "fuzz:2379");
      absl::StatusOr<ipclock::HttpReply> reply =
          conn.Post("/v3/kv/range", "{}", ipclock::Deadline::Never());
      if (reply.ok()) (void)ipclock::JsonValue::Parse(reply->body);
      break;
    }
    default: {
      ipclock::HttpConnection conn(std::make_unique<InputStream>(rest, piece), "fuzz:2379");
      std::string error_body;
      absl::StatusOr<int> status =
          conn.StartStream("/v3/watch", "{}", ipclock::Deadline::Never(), &error_body);
      if (!status.ok() || *status != 200) break;
      for (int i = 0; i < 1000; ++i) {
        absl::StatusOr<std::vector<std::string>> messages =
            conn.ReadMessages(ipclock::Deadline::Never());
        if (!messages.ok()) break;
        for (const std::string& m : *messages) (void)ipclock::JsonValue::Parse(m);
      }
      break;
    }
  }
  return 0;
}
