// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/etcd/etcd_http.h"


#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "platform/socket_wait.h"

namespace ipclock {

namespace {

// Replies are small (a range of lock keys); a head or body far larger is
// not etcd's gateway.
constexpr size_t kMaxHead = 64 * 1024;
constexpr size_t kMaxBody = 64 * 1024 * 1024;
constexpr size_t kReadChunk = 16 * 1024;

}  // namespace

HttpConnection::HttpConnection(std::unique_ptr<ByteStream> stream, std::string host)
    : stream_(std::move(stream)), host_(std::move(host)) {}

bool HttpConnection::HasInput() const {
  if (stream_->HasBuffered() || !buf_.empty()) return true;
  return HasPendingInput(stream_->fd());
}

absl::Status HttpConnection::Broken(absl::Status s) {
  usable_ = false;
  return s;
}

absl::Status HttpConnection::SendRequest(absl::string_view path, absl::string_view body,
                                         Deadline deadline, bool* sent) {
  if (sent != nullptr) *sent = false;
  if (!usable_) return TransientError("the connection failed earlier");
  buf_.clear();
  std::string request =
      absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: ", host_,
                   "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
                   "\r\n\r\n", body);
  // A failed write may have sent part of it: the server may act on it.
  if (sent != nullptr) *sent = true;
  absl::Status s = stream_->Write(request, ForPlatform(deadline));
  if (!s.ok()) return Broken(std::move(s));
  return absl::OkStatus();
}

absl::Status HttpConnection::Fill(Deadline deadline) {
  char chunk[kReadChunk];
  absl::StatusOr<size_t> n = stream_->Read(chunk, sizeof(chunk), ForPlatform(deadline));
  if (!n.ok()) return n.status();
  if (*n == 0) return TransientError("the server closed the connection");
  buf_.append(chunk, *n);
  return absl::OkStatus();
}

absl::Status HttpConnection::ReadHead(Deadline deadline) {
  size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
    if (buf_.size() > kMaxHead) {
      return Broken(UnexpectedError("an HTTP reply head of over 64 KiB"));
    }
    if (absl::Status s = Fill(deadline); !s.ok()) return Broken(std::move(s));
  }
  const std::string head = buf_.substr(0, end);
  buf_.erase(0, end + 4);
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  absl::string_view status_line = lines[0];
  int status = 0;
  if (!absl::ConsumePrefix(&status_line, "HTTP/1.") || status_line.size() < 5 ||
      !absl::SimpleAtoi(status_line.substr(2, 3), &status)) {
    return Broken(UnexpectedError(
        absl::StrCat("not an HTTP reply: \"", absl::CHexEscape(lines[0].substr(0, 80)),
                     "\" (is this etcd's client port?)")));
  }
  status_ = status;
  chunked_ = false;
  close_ = false;
  content_length_ = -1;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) continue;
    const std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    const std::string value =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    if (name == "content-length") {
      if (!absl::SimpleAtoi(value, &content_length_) || content_length_ < 0) {
        return Broken(UnexpectedError("a bad Content-Length"));
      }
    } else if (name == "transfer-encoding") {
      chunked_ = absl::StrContains(value, "chunked");
    } else if (name == "connection") {
      close_ = absl::StrContains(value, "close");
    }
  }
  in_chunk_ = false;
  chunk_left_ = 0;
  stream_done_ = false;
  pending_.clear();
  return absl::OkStatus();
}

absl::Status HttpConnection::DecodeChunks(std::string* out, bool* done) {
  *done = false;
  for (;;) {
    if (in_chunk_) {
      if (chunk_left_ > 0) {
        const size_t take = std::min<size_t>(static_cast<size_t>(chunk_left_), buf_.size());
        out->append(buf_, 0, take);
        buf_.erase(0, take);
        chunk_left_ -= static_cast<int64_t>(take);
        if (chunk_left_ > 0) return absl::OkStatus();
      }
      if (buf_.size() < 2) return absl::OkStatus();
      if (buf_.compare(0, 2, "\r\n") != 0) {
        return UnexpectedError("bad chunked framing (no CRLF after a chunk)");
      }
      buf_.erase(0, 2);
      in_chunk_ = false;
      continue;
    }
    const size_t eol = buf_.find("\r\n");
    if (eol == std::string::npos) {
      if (buf_.size() > 1024) return UnexpectedError("bad chunked framing (long size line)");
      return absl::OkStatus();
    }
    absl::string_view size_text = absl::string_view(buf_).substr(0, eol);
    size_text = size_text.substr(0, size_text.find(';'));
    uint64_t size = 0;
    if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(size_text), &size) ||
        size > kMaxBody) {
      return UnexpectedError("bad chunked framing (chunk size)");
    }
    if (size == 0) {
      // The last chunk; then trailers, none from the gateway, and a CRLF.
      const size_t end = buf_.find("\r\n\r\n", eol);
      if (end == std::string::npos) {
        if (buf_.size() > eol + 4096) return UnexpectedError("bad chunked framing (trailers)");
        return absl::OkStatus();
      }
      buf_.erase(0, end + 4);
      *done = true;
      return absl::OkStatus();
    }
    buf_.erase(0, eol + 2);
    in_chunk_ = true;
    chunk_left_ = static_cast<int64_t>(size);
  }
}

absl::Status HttpConnection::ReadBody(Deadline deadline, std::string* body) {
  body->clear();
  if (chunked_) {
    for (;;) {
      bool done = false;
      if (absl::Status s = DecodeChunks(body, &done); !s.ok()) return Broken(std::move(s));
      if (done) break;
      if (body->size() > kMaxBody) return Broken(UnexpectedError("a reply of over 64 MiB"));
      if (absl::Status s = Fill(deadline); !s.ok()) return Broken(std::move(s));
    }
  } else if (content_length_ >= 0) {
    if (static_cast<uint64_t>(content_length_) > kMaxBody) {
      return Broken(UnexpectedError("a reply of over 64 MiB"));
    }
    while (buf_.size() < static_cast<size_t>(content_length_)) {
      if (absl::Status s = Fill(deadline); !s.ok()) return Broken(std::move(s));
    }
    body->assign(buf_, 0, static_cast<size_t>(content_length_));
    buf_.erase(0, static_cast<size_t>(content_length_));
  } else {
    // Delimited by the end of the connection.
    for (;;) {
      absl::Status s = Fill(deadline);
      if (!s.ok() && absl::IsUnavailable(s) && absl::StrContains(s.message(), "closed")) break;
      if (!s.ok()) return Broken(std::move(s));
      if (buf_.size() > kMaxBody) return Broken(UnexpectedError("a reply of over 64 MiB"));
    }
    body->swap(buf_);
    buf_.clear();
    usable_ = false;
  }
  if (close_) usable_ = false;
  return absl::OkStatus();
}

absl::StatusOr<HttpReply> HttpConnection::Post(absl::string_view path, absl::string_view body,
                                               Deadline deadline, bool* sent) {
  if (absl::Status s = SendRequest(path, body, deadline, sent); !s.ok()) return s;
  if (absl::Status s = ReadHead(deadline); !s.ok()) return s;
  HttpReply reply;
  reply.status = status_;
  if (absl::Status s = ReadBody(deadline, &reply.body); !s.ok()) return s;
  return reply;
}

absl::StatusOr<int> HttpConnection::StartStream(absl::string_view path, absl::string_view body,
                                                Deadline deadline, std::string* error_body) {
  if (absl::Status s = SendRequest(path, body, deadline, nullptr); !s.ok()) return s;
  if (absl::Status s = ReadHead(deadline); !s.ok()) return s;
  if (status_ != 200 || !chunked_) {
    std::string ignored;
    if (absl::Status s = ReadBody(deadline, error_body != nullptr ? error_body : &ignored);
        !s.ok()) {
      return s;
    }
    usable_ = false;  // not a stream; a new request needs a new connection
  }
  return status_;
}

absl::StatusOr<std::vector<std::string>> HttpConnection::ReadMessages(Deadline deadline) {
  std::vector<std::string> out;
  for (;;) {
    bool done = false;
    if (absl::Status s = DecodeChunks(&pending_, &done); !s.ok()) return Broken(std::move(s));
    stream_done_ = stream_done_ || done;
    size_t eol;
    while ((eol = pending_.find('\n')) != std::string::npos) {
      std::string line = pending_.substr(0, eol);
      pending_.erase(0, eol + 1);
      if (!absl::StripAsciiWhitespace(line).empty()) out.push_back(std::move(line));
    }
    if (pending_.size() > kMaxBody) return Broken(UnexpectedError("a message of over 64 MiB"));
    if (!out.empty()) return out;
    if (stream_done_) return Broken(TransientError("the server ended the stream"));
    absl::Status s = Fill(deadline);
    if (absl::IsDeadlineExceeded(s)) return out;
    if (!s.ok()) return Broken(std::move(s));
  }
}

}  // namespace ipclock
