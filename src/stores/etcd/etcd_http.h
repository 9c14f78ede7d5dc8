// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// HTTP/1.1 on one connection to one etcd member's gRPC gateway, which
// serves etcd's v3 API as JSON POSTs (`/v3/kv/txn`, `/v3/lease/grant`...)
// on the client port. Only what the gateway needs: POST with a body,
// replies with Content-Length or chunked bodies, keep-alive, and the
// streamed reply of a watch (one JSON message per line of a chunked body
// that stays open).
//
// A connection serves one request at a time, from one thread. After any
// failure it is unusable (`usable()` false): a reply may be half read.

#ifndef IPCLOCK_STORES_ETCD_HTTP_H_
#define IPCLOCK_STORES_ETCD_HTTP_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/deadline.h"
#include "platform/net_stream.h"

namespace ipclock {

struct HttpReply {
  int status = 0;
  std::string body;
};

class HttpConnection {
 public:
  // `host` is what the Host header says (host:port).
  HttpConnection(std::unique_ptr<ByteStream> stream, std::string host);

  // POSTs `body` (JSON) to `path` and reads the whole reply. Unavailable
  // (or DeadlineExceeded when `deadline` passed) on a transport failure;
  // `*sent`, when given, says whether any of the request went out (if not,
  // the server never saw it and it may be sent elsewhere).
  absl::StatusOr<HttpReply> Post(absl::string_view path, absl::string_view body,
                                 Deadline deadline, bool* sent = nullptr);

  // Streams: POSTs and reads the reply's head. The HTTP status, or a
  // transport failure as for Post(). A status other than 200 has its body
  // read whole into `*error_body`.
  absl::StatusOr<int> StartStream(absl::string_view path, absl::string_view body,
                                  Deadline deadline, std::string* error_body);
  // The messages of the streamed reply that are complete by `deadline`
  // (waiting for the first one until then; a past deadline takes only what
  // has arrived). Empty when none came. Unavailable once the stream ended
  // or failed.
  absl::StatusOr<std::vector<std::string>> ReadMessages(Deadline deadline);

  bool usable() const { return usable_; }
  ByteStream& stream() { return *stream_; }
  const ByteStream& stream() const { return *stream_; }
  // Input is waiting (on the socket, or decoded by TLS) or the server hung
  // up: for an idle kept-alive connection, a sign it was closed.
  bool HasInput() const;

 private:
  absl::Status SendRequest(absl::string_view path, absl::string_view body, Deadline deadline,
                           bool* sent);
  absl::Status ReadHead(Deadline deadline);
  absl::Status ReadBody(Deadline deadline, std::string* body);
  // Reads more into buf_; an end of stream is Unavailable.
  absl::Status Fill(Deadline deadline);
  // Decodes as much of the chunked body in buf_ as is there into `*out`;
  // sets `*done` at the last chunk. InvalidArgument for bad framing.
  absl::Status DecodeChunks(std::string* out, bool* done);
  absl::Status Broken(absl::Status s);

  std::unique_ptr<ByteStream> stream_;
  std::string host_;
  bool usable_ = true;
  std::string buf_;  // read, not yet consumed
  // The current reply's head.
  int status_ = 0;
  bool chunked_ = false;
  bool close_ = false;
  int64_t content_length_ = -1;
  // Streams: the decoded body not yet split into lines, and where the
  // current chunk stands.
  std::string pending_;
  int64_t chunk_left_ = 0;
  bool in_chunk_ = false;
  bool stream_done_ = false;
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ETCD_HTTP_H_
