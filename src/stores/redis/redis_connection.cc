// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/redis/redis_connection.h"

#include <errno.h>
#include <string.h>
#include <sys/time.h>

#include <algorithm>
#include <charconv>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "core/store_errors.h"
#include "platform/descriptors.h"
#include "platform/errors.h"
#include "platform/hiredis_calls.h"
#include "platform/process_id.h"
#include "platform/socket_send.h"
#include "platform/socket_wait.h"

namespace ipclock {

namespace {

// Releases that failed for want of a server, kept for the next connection.
constexpr size_t kMaxOrphans = 256;

struct timeval ToTimevalOrZero(absl::Duration d) {
  if (d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return timeval{0, 0};  // hiredis: no timeout
  }
  return absl::ToTimeval(d);
}

// RESP, the protocol's request form: an array of bulk strings, encoded
// into one buffer that keeps its capacity. Written by hand, sized once:
// building it with string appends cost a third of a request's client-side
// instructions (callgrind).
char* PutLength(char* p, char type, size_t n) {
  *p++ = type;
  p = std::to_chars(p, p + 20, n).ptr;
  *p++ = '\r';
  *p++ = '\n';
  return p;
}
void AppendRequest(std::string* out, const absl::string_view* args, size_t n) {
  constexpr size_t kHead = 24;  // type, up to 20 digits, CRLF
  size_t most = kHead;
  for (size_t i = 0; i < n; ++i) most += kHead + args[i].size() + 2;
  const size_t start = out->size();
  out->resize(start + most);
  char* const begin = &(*out)[0];
  char* p = PutLength(begin + start, '*', n);
  for (size_t i = 0; i < n; ++i) {
    p = PutLength(p, '$', args[i].size());
    if (!args[i].empty()) memcpy(p, args[i].data(), args[i].size());
    p += args[i].size();
    *p++ = '\r';
    *p++ = '\n';
  }
  out->resize(static_cast<size_t>(p - begin));
}
void AppendRequest(std::string* out, std::initializer_list<absl::string_view> args) {
  AppendRequest(out, args.begin(), args.size());
}

// The run_id field of an INFO reply, or "".
std::string RunIdOf(absl::string_view info) {
  constexpr absl::string_view kField = "run_id:";
  size_t at = info.find(kField);
  if (at == absl::string_view::npos) return "";
  info.remove_prefix(at + kField.size());
  return std::string(info.substr(0, info.find_first_of("\r\n")));
}

}  // namespace

void RedisReplyFree::operator()(redisReply* r) const { Hiredis().freeReplyObject(r); }

absl::string_view RedisReplyText(const redisReply* r) {
  return r->str != nullptr ? absl::string_view(r->str, r->len) : absl::string_view();
}

bool IsRedisError(const redisReply* r, absl::string_view prefix) {
  return r->type == REDIS_REPLY_ERROR && absl::StartsWith(RedisReplyText(r), prefix);
}

RedisConnection::RedisConnection(const RedisStoreOptions& options, std::string describe,
                                 bool semaphores)
    : options_(options), describe_(std::move(describe)), semaphores_(semaphores) {
  if (!options_.unix_socket.empty()) {
    server_ = options_.unix_socket;
  } else {
    const bool v6 = absl::StrContains(options_.host, ':');
    server_ = absl::StrCat(v6 ? "[" : "", options_.host, v6 ? "]" : "", ":",
                           options_.port);
  }
}

RedisConnection::~RedisConnection() {
  std::lock_guard<std::mutex> guard(mu_);
  DisconnectLocked();
}

absl::Status RedisConnection::Start() {
  std::lock_guard<std::mutex> guard(mu_);
  return EnsureConnectedLocked("");
}

// --- Errors --------------------------------------------------------------------------

std::string RedisConnection::Scrub(absl::string_view text) const {
  if (options_.password.size() < 2) return std::string(text);
  return absl::StrReplaceAll(text, {{options_.password, "***"}});
}

absl::Status RedisConnection::IoError(absl::string_view resource, absl::string_view what,
                                      int err, const char* errstr,
                                      int saved_errno) const {
  std::string detail;
  if (err == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK)) {
    detail = absl::StrCat("no reply within command_timeout (",
                          absl::FormatDuration(options_.command_timeout), ")");
  } else if (err == REDIS_ERR_EOF) {
    detail = "the server closed the connection";
  } else {
    detail = errstr != nullptr && errstr[0] != '\0' ? errstr : "I/O error";
  }
  StoreErrorMaker fault = TransientError;
  if (err == REDIS_ERR_OOM) fault = OutOfResourcesError;
  if (err == REDIS_ERR_PROTOCOL) fault = UnexpectedError;
  return fault(describe_, resource,
               absl::StrCat(what, " ", server_, ": ", Scrub(detail)));
}

absl::Status RedisConnection::SendError(absl::string_view resource, int err) const {
  std::string detail =
      err == EAGAIN || err == EWOULDBLOCK
          ? absl::StrCat("no progress within command_timeout (",
                         absl::FormatDuration(options_.command_timeout), ")")
          : absl::StrCat(strerror(err), " [", ErrnoName(err), "]");
  return TransientError(describe_, resource,
                        absl::StrCat("cannot send to ", server_, ": ", detail));
}

absl::Status RedisConnection::ReplyError(const redisReply* r, absl::string_view resource,
                                         absl::string_view what) const {
  std::string text = Scrub(RedisReplyText(r));
  StoreErrorMaker fault = UnexpectedError;
  if (IsRedisError(r, "NOAUTH") || IsRedisError(r, "WRONGPASS") ||
      IsRedisError(r, "NOPERM") || absl::StrContains(text, "invalid password") ||
      absl::StrContains(text, "without any password configured")) {
    fault = RefusedError;
  } else if (IsRedisError(r, "LOADING") || IsRedisError(r, "BUSY") ||
             IsRedisError(r, "MASTERDOWN") || IsRedisError(r, "TRYAGAIN") ||
             IsRedisError(r, "CLUSTERDOWN")) {
    fault = TransientError;
  } else if (IsRedisError(r, "OOM")) {
    fault = OutOfResourcesError;
  } else if (IsRedisError(r, "WRONGTYPE") || IsRedisError(r, "READONLY")) {
    fault = MisuseError;
  }
  return fault(describe_, resource,
               absl::StrCat(what, ": ", server_, " replied: ", text));
}

// --- Connecting ----------------------------------------------------------------------

void RedisConnection::DisconnectLocked() {
  subscribed_ = false;
  subscribed_fd_.store(-1);
  if (ctx_ != nullptr) {
    // In a child after fork() this closes the child's copy of the socket
    // only; nothing is sent, so the parent's connection is untouched.
    Hiredis().redisFree(ctx_);
    ctx_ = nullptr;
  }
}

absl::Status RedisConnection::EnsureConnectedLocked(absl::string_view resource) {
  const pid_t pid = CurrentPid();
  if (ctx_ != nullptr && ctx_pid_ != pid) {
    // We are a forked child: the socket is our parent's conversation.
    DisconnectLocked();
    orphans_.clear();  // the parent retries its own
  }
  if (ctx_ != nullptr) return absl::OkStatus();
  if (absl::Status s = ConnectLocked(resource); !s.ok()) return s;
  if (!orphans_.empty()) {
    ReleaseOrphansLocked();
    if (ctx_ == nullptr) {
      return TransientError(describe_, resource,
                            absl::StrCat("the connection to ", server_,
                                         " broke right after it was opened"));
    }
  }
  return absl::OkStatus();
}

absl::Status RedisConnection::ConnectLocked(absl::string_view resource) {
  const struct timeval connect_tv = ToTimevalOrZero(options_.connect_timeout);
  const bool timed = connect_tv.tv_sec != 0 || connect_tv.tv_usec != 0;
  redisContext* c;
  if (!options_.unix_socket.empty()) {
    c = timed ? Hiredis().redisConnectUnixWithTimeout(options_.unix_socket.c_str(), connect_tv)
              : Hiredis().redisConnectUnix(options_.unix_socket.c_str());
  } else {
    c = timed ? Hiredis().redisConnectWithTimeout(options_.host.c_str(), options_.port, connect_tv)
              : Hiredis().redisConnect(options_.host.c_str(), options_.port);
  }
  if (c == nullptr) {
    return OutOfResourcesError(describe_, resource,
                               "out of memory for a Redis connection");
  }
  if (c->err != 0) {
    const int saved_errno = errno;
    absl::Status s = IoError(resource, "cannot connect to", c->err, c->errstr, saved_errno);
    if (c->err == REDIS_ERR_IO && (saved_errno == EINPROGRESS || saved_errno == ETIMEDOUT ||
                                   saved_errno == EAGAIN)) {
      s = TransientError(describe_, resource,
                         absl::StrCat("cannot connect to ", server_,
                                      ": no answer within connect_timeout (",
                                      absl::FormatDuration(options_.connect_timeout), ")"));
    }
    Hiredis().redisFree(c);
    return s;
  }
  // hiredis does not make its socket close-on-exec (platform/descriptors.h).
  SetCloseOnExec(c->fd);
  const struct timeval command_tv = ToTimevalOrZero(options_.command_timeout);
  if ((command_tv.tv_sec != 0 || command_tv.tv_usec != 0) &&
      Hiredis().redisSetTimeout(c, command_tv) != REDIS_OK) {
    Hiredis().redisFree(c);
    return UnexpectedError(describe_, resource,
                           "cannot set the command timeout on the socket");
  }
  if (options_.unix_socket.empty() && Hiredis().redisEnableKeepAlive(c) != REDIS_OK) {
    // Without keepalives a dead peer is noticed at the next request only;
    // the command timeout still bounds every request.
    Hiredis().redisFree(c);
    return UnexpectedError(describe_, resource,
                           "cannot enable TCP keepalives on the socket");
  }

  // One round trip: AUTH, SELECT, CLIENT SETNAME, INFO server (run_id), and
  // SCRIPT LOAD of each script, pipelined.
  enum class Step { kAuth, kSelect, kName, kInfo, kLoad };
  struct Planned {
    Step step;
    int script;
  };
  std::vector<Planned> steps;
  std::string request;
  if (!options_.password.empty()) {
    if (options_.user.empty()) {
      AppendRequest(&request, {"AUTH", options_.password});
    } else {
      AppendRequest(&request, {"AUTH", options_.user, options_.password});
    }
    steps.push_back({Step::kAuth, 0});
  }
  const std::string db = absl::StrCat(options_.db);
  if (options_.db != 0) {
    AppendRequest(&request, {"SELECT", db});
    steps.push_back({Step::kSelect, 0});
  }
  const std::string client_name = absl::StrCat("ipclock-", CurrentPid());
  AppendRequest(&request, {"CLIENT", "SETNAME", client_name});
  steps.push_back({Step::kName, 0});
  AppendRequest(&request, {"INFO", "server"});
  steps.push_back({Step::kInfo, 0});
  for (int s = 0; s < kNumRedisScripts; ++s) {
    const RedisScript script = static_cast<RedisScript>(s);
    if (IsSemaphoreScript(script) != semaphores_) continue;
    const char* text = RedisScriptText(options_.format, script);
    if (text == nullptr) continue;
    AppendRequest(&request, {"SCRIPT", "LOAD", text});
    steps.push_back({Step::kLoad, s});
  }
  size_t sent = 0;
  if (int err = SendAll(c->fd, request, &sent); err != 0) {
    Hiredis().redisFree(c);
    absl::Status s = SendError(resource, err);
    return Restated(s, absl::StrCat(s.message(), " (connection setup)"));
  }

  absl::Status failure;
  std::string run_id;
  std::array<std::string, kNumRedisScripts> sha;
  for (const Planned& planned : steps) {
    void* raw = nullptr;
    if (Hiredis().redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) {
      const int saved_errno = errno;
      absl::Status s = IoError(resource, "connection setup with", c->err, c->errstr, saved_errno);
      Hiredis().redisFree(c);
      return s;
    }
    RedisReply r(static_cast<redisReply*>(raw));
    if (!failure.ok()) continue;  // read the rest, report the first failure
    if (r->type == REDIS_REPLY_ERROR) {
      switch (planned.step) {
        case Step::kAuth:
          failure = RefusedError(describe_, resource,
                                 absl::StrCat("AUTH", options_.user.empty() ? "" : " as user ",
                                              options_.user, " refused by ", server_,
                                              ": ", Scrub(RedisReplyText(r.get()))));
          break;
        case Step::kSelect:
          failure = IsRedisError(r.get(), "NOAUTH")
                        ? ReplyError(r.get(), resource, "SELECT")
                        : ConfigurationError(describe_, resource,
                                             absl::StrCat("SELECT ", db, " refused by ", server_,
                                                          ": ", Scrub(RedisReplyText(r.get()))));
          break;
        case Step::kName:
        case Step::kInfo:
          // CLIENT SETNAME only names us in CLIENT LIST, and INFO only
          // tells a restart apart in loss reports; an ACL user may lack
          // either, which is fine. Anything else shows again below.
          if (IsRedisError(r.get(), "NOAUTH")) {
            failure = ReplyError(r.get(), resource,
                                 planned.step == Step::kName ? "CLIENT SETNAME" : "INFO");
          }
          break;
        case Step::kLoad:
          failure = ReplyError(
              r.get(), resource,
              absl::StrCat("SCRIPT LOAD (",
                           RedisScriptName(static_cast<RedisScript>(planned.script)), ")"));
          break;
      }
      if (!failure.ok() && absl::IsPermissionDenied(failure) &&
          options_.password.empty() && IsRedisError(r.get(), "NOAUTH")) {
        failure = RefusedError(describe_, resource,
                               absl::StrCat(server_, " requires a password (NOAUTH): "
                                            "give one in the DSN, redis://[user:]password@host"));
      }
      continue;
    }
    if (planned.step == Step::kInfo && r->type == REDIS_REPLY_STRING) {
      run_id = RunIdOf(RedisReplyText(r.get()));
    } else if (planned.step == Step::kLoad) {
      if (r->type != REDIS_REPLY_STRING) {
        failure = UnexpectedError(describe_, resource,
                                  "SCRIPT LOAD did not return a SHA1");
        continue;
      }
      sha[planned.script] = std::string(RedisReplyText(r.get()));
    }
  }
  if (!failure.ok()) {
    Hiredis().redisFree(c);
    return failure;
  }
  if (!run_id.empty()) {
    if (!run_id_.empty() && run_id != run_id_) ++epoch_;
    run_id_ = std::move(run_id);
  }
  sha_ = std::move(sha);
  ctx_ = c;
  ctx_pid_ = CurrentPid();
  ctx_fresh_ = true;
  ++connections_;
  return absl::OkStatus();
}

void RedisConnection::ReleaseOrphansLocked() {
  std::vector<Orphan> orphans;
  orphans.swap(orphans_);  // nested calls below see none
  size_t i = 0;
  for (; i < orphans.size() && ctx_ != nullptr; ++i) {
    // Best effort: if it fails, the lease ends the lock anyway.
    Call call;
    absl::StatusOr<RedisReply> r = EvalLocked(
        RedisScript::kDelete, orphans[i].names,
        {orphans[i].token, options_.fencing ? "1" : "0"}, call);
    if (!r.ok() && absl::IsUnavailable(r.status())) break;
  }
  // Those not tried wait for the next connection.
  for (; i < orphans.size(); ++i) orphans_.push_back(std::move(orphans[i]));
}

void RedisConnection::QueueRelease(const RedisNames& names, absl::string_view token) {
  std::lock_guard<std::mutex> guard(mu_);
  if (orphans_.size() < kMaxOrphans) orphans_.push_back(Orphan{names, std::string(token)});
}

void RedisConnection::ForgetRelease(absl::string_view token) {
  std::lock_guard<std::mutex> guard(mu_);
  if (orphans_.empty()) return;
  orphans_.erase(std::remove_if(orphans_.begin(), orphans_.end(),
                                [&](const Orphan& o) { return o.token == token; }),
                 orphans_.end());
}

// --- Requests ------------------------------------------------------------------------

absl::StatusOr<RedisReply> RedisConnection::RoundTripLocked(
    absl::FunctionRef<void(std::string*)> build, const Call& call) {
  for (int attempt = 0;; ++attempt) {
    if (absl::Status s = EnsureConnectedLocked(call.resource); !s.ok()) return s;
    const bool fresh = ctx_fresh_;
    ctx_fresh_ = false;
    request_.clear();
    build(&request_);
    // Sent whole or not at all as far as the server goes: it runs no
    // partial request. So a failed send means "not run", and only a lost
    // reply to a request that went out whole is ambiguous.
    size_t sent = 0;
    const int send_err = SendAll(ctx_->fd, request_, &sent);
    void* raw = nullptr;
    if (send_err == 0 && Hiredis().redisGetReply(ctx_, &raw) == REDIS_OK && raw != nullptr) {
      if (call.epoch != nullptr) *call.epoch = epoch_;
      return RedisReply(static_cast<redisReply*>(raw));
    }
    const int saved_errno = errno;
    absl::Status err;
    if (send_err != 0) {
      err = SendError(call.resource, send_err);
    } else {
      if (call.ambiguous != nullptr) *call.ambiguous = true;
      err = IoError(call.resource, "no reply from", ctx_->err, ctx_->errstr, saved_errno);
    }
    DisconnectLocked();
    // A connection that just opened and failed means the server is gone;
    // one that had been idle may only have been dropped: try once more.
    if (fresh || attempt > 0) return err;
  }
}

uint64_t RedisConnection::connections() {
  std::lock_guard<std::mutex> guard(mu_);
  return connections_;
}

// --- Client tracking's invalidations --------------------------------------------------

absl::StatusOr<RedisReply> RedisConnection::SubscriptionStepLocked(
    std::initializer_list<absl::string_view> argv, absl::string_view what, int type,
    absl::string_view otherwise) {
  absl::StatusOr<RedisReply> reply =
      RoundTripLocked([argv](std::string* out) { AppendRequest(out, argv); }, Call{});
  if (!reply.ok() || (*reply)->type == type) return reply;
  absl::Status s = (*reply)->type == REDIS_REPLY_ERROR
                       ? ReplyError(reply->get(), "", what)
                       : UnexpectedError(describe_, "", otherwise);
  DisconnectLocked();
  return MisuseError(s.message());
}

absl::StatusOr<int64_t> RedisConnection::SubscribeToInvalidations() {
  std::lock_guard<std::mutex> guard(mu_);
  DisconnectLocked();
  absl::StatusOr<RedisReply> id = SubscriptionStepLocked(
      {"CLIENT", "ID"}, "CLIENT ID", REDIS_REPLY_INTEGER, "CLIENT ID did not return a number");
  if (!id.ok()) return id.status();
  absl::StatusOr<RedisReply> subscribed =
      SubscriptionStepLocked({"SUBSCRIBE", "__redis__:invalidate"}, "SUBSCRIBE",
                             REDIS_REPLY_ARRAY, "SUBSCRIBE was not confirmed");
  if (!subscribed.ok()) return subscribed.status();
  subscribed_ = true;
  subscribed_fd_.store(ctx_->fd);
  return static_cast<int64_t>((*id)->integer);
}

RedisConnection::Pushed RedisConnection::ReadInvalidations(
    absl::FunctionRef<void(absl::string_view key)> key) {
  std::unique_lock<std::mutex> guard(mu_, std::try_to_lock);
  if (!guard.owns_lock()) return Pushed::kBusy;
  if (!subscribed_ || ctx_ == nullptr || ctx_pid_ != CurrentPid()) return Pushed::kBroken;
  // Read here without blocking and fed to hiredis's parser: the context's
  // own reads block.
  char buf[16384];
  for (;;) {
    size_t got = 0;
    const int err = ReceiveAvailable(ctx_->fd, buf, sizeof(buf), &got);
    if (err == EAGAIN) break;
    if (err != 0 || Hiredis().redisReaderFeed(ctx_->reader, buf, got) != REDIS_OK) {
      DisconnectLocked();  // the server closed it, or it failed
      return Pushed::kBroken;
    }
  }
  Pushed result = Pushed::kKeys;
  for (;;) {
    void* raw = nullptr;
    if (Hiredis().redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
      DisconnectLocked();
      return Pushed::kBroken;
    }
    if (raw == nullptr) break;
    RedisReply r(static_cast<redisReply*>(raw));
    // ["message", "__redis__:invalidate", [key...] or nil (everything)].
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
        RedisReplyText(r->element[0]) != "message") {
      continue;
    }
    const redisReply* keys = r->element[2];
    if (keys->type == REDIS_REPLY_ARRAY) {
      for (size_t i = 0; i < keys->elements; ++i) key(RedisReplyText(keys->element[i]));
    } else {
      result = Pushed::kAll;
    }
  }
  return result;
}

absl::StatusOr<RedisReply> RedisConnection::Command(
    std::initializer_list<absl::string_view> args, const Call& call) {
  std::lock_guard<std::mutex> guard(mu_);
  return RoundTripLocked([&](std::string* out) { AppendRequest(out, args); }, call);
}

absl::StatusOr<RedisReply> RedisConnection::Eval(
    RedisScript script, const RedisNames& names,
    std::initializer_list<absl::string_view> argv, const Call& call) {
  std::lock_guard<std::mutex> guard(mu_);
  return EvalLocked(script, names, argv, call);
}

absl::StatusOr<RedisReply> RedisConnection::EvalLocked(
    RedisScript script, const RedisNames& names,
    std::initializer_list<absl::string_view> argv, const Call& call) {
  const int index = static_cast<int>(script);
  // The request is built in an array on the stack; every script takes at
  // most five arguments.
  constexpr size_t kMaxArgv = 5;
  if (argv.size() > kMaxArgv) {
    return UnexpectedError(describe_, call.resource,
                           absl::StrCat("the ", RedisScriptName(script), " script was given ",
                                        argv.size(), " arguments"));
  }
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<RedisReply> r = RoundTripLocked(
        [&](std::string* out) {
          absl::string_view args[5 + kMaxArgv] = {"EVALSHA", sha_[index], "2", names.key,
                                                  names.meta};
          size_t n = 5;
          for (absl::string_view a : argv) args[n++] = a;
          AppendRequest(out, args, n);
        },
        call);
    if (!r.ok()) return r;
    if (!IsRedisError(r->get(), "NOSCRIPT") || attempt > 0) return r;
    // The script cache was emptied under a live connection (SCRIPT FLUSH).
    const char* text = RedisScriptText(options_.format, script);
    Call load = call;
    load.ambiguous = nullptr;
    absl::StatusOr<RedisReply> loaded = RoundTripLocked(
        [&](std::string* out) { AppendRequest(out, {"SCRIPT", "LOAD", text}); }, load);
    if (!loaded.ok()) return loaded;
    if ((*loaded)->type != REDIS_REPLY_STRING) {
      return ReplyError(loaded->get(), call.resource, "SCRIPT LOAD");
    }
    sha_[index] = std::string(RedisReplyText(loaded->get()));
  }
}

}  // namespace ipclock
