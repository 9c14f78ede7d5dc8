// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/zookeeper/zookeeper_session.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "platform/condition_wait.h"
#include "platform/errors.h"
#include "platform/process_id.h"
#include "platform/resolve_names.h"
#include "platform/tcp_probe.h"
#include "stores/zookeeper/zookeeper_multi.h"
#include "stores/zookeeper/zookeeper_store.h"

namespace ipclock {

// --- Bells -----------------------------------------------------------------------

void ZkBell::Ring() {
  std::lock_guard<std::mutex> guard(mu_);
  rung_ = true;
  cv_.notify_all();
  if (signal_) signal_->Notify();
}

bool ZkBell::Wait(Deadline deadline, int cancel_fd) {
  // A canceller is written from a signal handler, which cannot notify a
  // condition variable: the wait polls the bell's eventfd beside it.
  if (cancel_fd >= 0 && EnableSignal().ok()) {
    const int fd = signal_fd();
    for (;;) {
      {
        std::lock_guard<std::mutex> guard(mu_);
        if (rung_) {
          rung_ = false;
          signal_->Drain();
          return true;
        }
      }
      const CancellableWait woke = WaitReadableOrCancelled(fd, cancel_fd, ForPlatform(deadline));
      if (woke == CancellableWait::kReady) {
        DrainSignal();
        continue;
      }
      std::lock_guard<std::mutex> guard(mu_);
      const bool rung = std::exchange(rung_, false);
      return rung;
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  while (!rung_) {
    if (deadline.is_never()) {
      cv_.wait(lock);
    } else if (deadline.has_passed() || !WaitOnCondition(cv_, lock, ForPlatform(deadline))) {
      if (!rung_) return false;
    }
  }
  rung_ = false;
  return true;
}

absl::Status ZkBell::EnableSignal() {
  std::lock_guard<std::mutex> guard(mu_);
  if (signal_) return absl::OkStatus();
  absl::StatusOr<EventSignal> s = EventSignal::Create();
  if (!s.ok()) return s.status();
  signal_.emplace(*std::move(s));
  return absl::OkStatus();
}

int ZkBell::signal_fd() {
  std::lock_guard<std::mutex> guard(mu_);
  return signal_ ? signal_->fd() : -1;
}

void ZkBell::DrainSignal() {
  std::lock_guard<std::mutex> guard(mu_);
  if (signal_) signal_->Drain();
}

// --- Pending requests ------------------------------------------------------------

namespace {

int64_t Now() { return Deadline::NowNanos(); }

// Codes with which the servers answered; the others mean the request may
// not have reached them (or its answer did not come back).
bool IsAnswer(int rc) {
  return rc == ZOK || (rc <= ZAPIERROR && rc != ZSESSIONEXPIRED && rc != ZCLOSING &&
                       rc != ZSESSIONMOVED && rc != ZTHROTTLEDOP);
}

void DropLog(const char*) {
  // The client's own log lines (connection attempts, retries) would go to
  // stderr; what matters reaches callers as statuses.
}

}  // namespace

struct ZkSession::Pending {
  explicit Pending(ZkSession* s) : session(s) {}
  ZkSession* const session;  // outlives every completion (see the header)
  int64_t sent_nanos = 0;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  bool abandoned = false;  // the caller stopped waiting
  bool delete_if_late = false;  // a create nobody waits for is undone
  ZkResult result;
  // Inputs that must live until the completion.
  std::string path;
  std::string data;
  std::vector<ZkOp> ops;
  std::vector<zoo_op_t> zops;
  std::vector<zoo_op_result_t> zresults;
  std::vector<std::vector<char>> buffers;
};

namespace {

using Box = std::shared_ptr<ZkSession::Pending>;

}  // namespace

// The completions. Each takes back the box that the request carried.
struct ZkCompletions {
  static void Finish(const void* data, int rc, const std::function<void(ZkResult&)>& fill) {
    std::unique_ptr<Box> box(static_cast<Box*>(const_cast<void*>(data)));
    ZkSession::Pending& p = **box;
    if (IsAnswer(rc)) p.session->Answered(p.sent_nanos);
    bool undo = false;
    std::string created;
    {
      std::lock_guard<std::mutex> guard(p.mu);
      p.result.rc = rc;
      p.result.answered = IsAnswer(rc);
      if (fill) fill(p.result);
      p.done = true;
      undo = p.abandoned && p.delete_if_late && rc == ZOK;
      created = p.result.path;
      p.cv.notify_all();
    }
    if (undo) {
      ZkOp op;
      op.path = created;
      p.session->DeleteLater({op});
    }
  }
  static void StringStat(int rc, const char* value, const struct Stat* stat, const void* data) {
    Finish(data, rc, [&](ZkResult& r) {
      if (value != nullptr) r.path = value;
      if (stat != nullptr) {
        r.stat = *stat;
        r.has_stat = true;
      }
    });
  }
  static void Strings(int rc, const struct String_vector* strings, const void* data) {
    Finish(data, rc, [&](ZkResult& r) {
      if (strings == nullptr) return;
      for (int32_t i = 0; i < strings->count; ++i) r.children.emplace_back(strings->data[i]);
    });
  }
  static void StatOnly(int rc, const struct Stat* stat, const void* data) {
    Finish(data, rc, [&](ZkResult& r) {
      if (stat != nullptr) {
        r.stat = *stat;
        r.has_stat = true;
      }
    });
  }
  static void Data(int rc, const char* value, int len, const struct Stat* stat,
                   const void* data) {
    Finish(data, rc, [&](ZkResult& r) {
      if (value != nullptr && len > 0) r.data.assign(value, static_cast<size_t>(len));
      if (stat != nullptr) {
        r.stat = *stat;
        r.has_stat = true;
      }
    });
  }
  static void Void(int rc, const void* data) { Finish(data, rc, nullptr); }
  static void Multi(int rc, const void* data) {
    const Box& p = *static_cast<const Box*>(data);
    Finish(data, rc, [&](ZkResult& r) {
      for (const zoo_op_result_t& res : p->zresults) r.op_rcs.push_back(res.err);
      for (size_t i = 0; i < p->ops.size(); ++i) {
        if (p->ops[i].kind == ZkOp::Kind::kCreate && i < p->zresults.size() &&
            p->zresults[i].err == ZOK) {
          r.path = p->buffers[i].data();
        }
      }
    });
  }
};

template <typename Start>
ZkResult ZkSession::Call(std::shared_ptr<Pending> pending, absl::Duration wait, Start start) {
  auto* box = new Box(pending);
  pending->sent_nanos = Now();
  const int rc = start(static_cast<const void*>(box));
  if (rc != ZOK) {
    delete box;  // no completion will run
    ZkResult r;
    r.rc = rc;
    // The client refused the request itself (a path it cannot send): as
    // final as the servers' answer, and sending it again cannot help.
    r.answered = rc == ZBADARGUMENTS;
    return r;
  }
  std::unique_lock<std::mutex> lock(pending->mu);
  WaitOnCondition(pending->cv, lock, ForPlatform(Deadline::In(wait)),
                  [&] { return pending->done; });
  if (!pending->done) {
    pending->abandoned = true;
    ZkResult r;
    r.rc = ZOPERATIONTIMEOUT;
    return r;
  }
  return pending->result;
}

ZkResult ZkSession::Create(const std::string& path, absl::string_view data, int mode,
                           absl::Duration wait) {
  auto p = std::make_shared<Pending>(this);
  p->path = path;
  p->data = std::string(data);
  p->delete_if_late = true;
  return Call(p, wait, [&](const void* box) {
    return ZooKeeper().zoo_acreate2(
        zh_, p->path.c_str(), p->data.data(), static_cast<int>(p->data.size()),
        ZooKeeper().ZOO_OPEN_ACL_UNSAFE.get(), mode, &ZkCompletions::StringStat, box);
  });
}

ZkResult ZkSession::GetChildren(const std::string& path, absl::Duration wait) {
  auto p = std::make_shared<Pending>(this);
  p->path = path;
  return Call(p, wait, [&](const void* box) {
    return ZooKeeper().zoo_aget_children(zh_, p->path.c_str(), 0, &ZkCompletions::Strings, box);
  });
}

ZkResult ZkSession::Exists(const std::string& path, bool watch, absl::Duration wait) {
  auto p = std::make_shared<Pending>(this);
  p->path = path;
  return Call(p, wait, [&](const void* box) {
    return ZooKeeper().zoo_aexists(zh_, p->path.c_str(), watch ? 1 : 0, &ZkCompletions::StatOnly,
                                   box);
  });
}

ZkResult ZkSession::Get(const std::string& path, absl::Duration wait) {
  auto p = std::make_shared<Pending>(this);
  p->path = path;
  return Call(p, wait, [&](const void* box) {
    return ZooKeeper().zoo_aget(zh_, p->path.c_str(), 0, &ZkCompletions::Data, box);
  });
}

ZkResult ZkSession::Set(const std::string& path, absl::string_view data, int version,
                        absl::Duration wait) {
  auto p = std::make_shared<Pending>(this);
  p->path = path;
  p->data = std::string(data);
  return Call(p, wait, [&](const void* box) {
    return ZooKeeper().zoo_aset(zh_, p->path.c_str(), p->data.data(),
                                static_cast<int>(p->data.size()), version, &ZkCompletions::StatOnly,
                                box);
  });
}

ZkResult ZkSession::Delete(const std::string& path, int version, absl::Duration wait) {
  auto p = std::make_shared<Pending>(this);
  p->path = path;
  return Call(p, wait, [&](const void* box) {
    return ZooKeeper().zoo_adelete(zh_, p->path.c_str(), version, &ZkCompletions::Void, box);
  });
}

ZkResult ZkSession::Multi(const std::vector<ZkOp>& ops, absl::Duration wait) {
  auto p = std::make_shared<Pending>(this);
  p->ops = ops;
  p->zops.resize(ops.size());
  p->zresults.resize(ops.size());
  p->buffers.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const ZkOp& op = p->ops[i];
    switch (op.kind) {
      case ZkOp::Kind::kCreate:
        p->buffers[i].assign(op.path.size() + 64, '\0');
        ZooKeeper().zoo_create_op_init(
            &p->zops[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
            ZooKeeper().ZOO_OPEN_ACL_UNSAFE.get(), op.mode, p->buffers[i].data(),
            static_cast<int>(p->buffers[i].size()));
        p->delete_if_late = true;
        break;
      case ZkOp::Kind::kDelete:
        ZooKeeper().zoo_delete_op_init(&p->zops[i], op.path.c_str(), op.version);
        break;
      case ZkOp::Kind::kSet:
        ZooKeeper().zoo_set_op_init(&p->zops[i], op.path.c_str(), op.data.data(),
                                    static_cast<int>(op.data.size()), op.version, nullptr);
        break;
    }
  }
  return Call(p, wait, [&](const void* box) {
    return SendZkMulti(zh_, p->zops, p->zresults.data(), &ZkCompletions::Multi, box);
  });
}

// --- Session -----------------------------------------------------------------------

namespace {

// How long a session may take to come up before Open() asks whether the
// servers refuse connections: a server that listens makes one in a few
// milliseconds.
constexpr absl::Duration kRefusalGrace = absl::Milliseconds(200);
constexpr int kRefusalProbeMillis = 200;

// Whether every server of `servers` ("host:port,...") refuses TCP
// connections now.
bool EveryServerRefuses(absl::string_view servers) {
  for (absl::string_view server : absl::StrSplit(servers, ',')) {
    const ZkServer parsed = ParseZkServer(server);
    if (!EveryAddressRefuses(parsed.host.c_str(), parsed.port, kRefusalProbeMillis)) {
      return false;
    }
  }
  return true;
}

// The servers of `servers` ("host:port,...", an IPv6 host in brackets) as
// the client is to be given them: each name resolved here, all at once and
// within `deadline`, to numeric "address:port" entries (an IPv6 address
// without brackets: the client splits off the port at the last ':' and
// hands the rest to getaddrinfo(), which takes no brackets). The client
// would resolve the names itself, one after another and with no bound (a
// list of names that do not resolve kept it for as long as the resolver
// took for each). Unavailable when none resolves: a name that does not
// resolve now may later, as for any other store.
absl::StatusOr<std::string> NumericServers(absl::string_view servers, MonotonicDeadline deadline,
                                           const std::string& describe) {
  std::vector<ZkServer> parsed;
  std::vector<std::string> names;
  for (absl::string_view server : absl::StrSplit(servers, ',')) {
    parsed.push_back(ParseZkServer(server));
    names.push_back(parsed.back().host);
  }
  const std::vector<ResolvedName> resolved = ResolveNames(names, deadline);
  std::vector<std::string> entries;
  std::vector<std::string> failures;
  for (size_t i = 0; i < parsed.size(); ++i) {
    for (const std::string& address : resolved[i].addresses) {
      std::string entry = absl::StrCat(address, ":", parsed[i].port);
      if (std::find(entries.begin(), entries.end(), entry) == entries.end()) {
        entries.push_back(std::move(entry));
      }
    }
    // A few are enough to say why; a list of thousands would drown it.
    if (!resolved[i].error.empty() && failures.size() < 3) {
      failures.push_back(absl::StrCat(parsed[i].host, ": ", resolved[i].error));
    }
  }
  if (entries.empty()) {
    return TransientError(describe, "",
                          absl::StrCat("could not resolve the servers (",
                                       absl::StrJoin(failures, "; "),
                                       failures.size() < parsed.size() ? "; ..." : "", ")"));
  }
  return absl::StrJoin(entries, ",");
}

}  // namespace

ZkSession::ZkSession(const Settings& settings)
    : settings_(settings), pid_(CurrentPid()), timeout_(settings.session_timeout) {}

absl::StatusOr<std::shared_ptr<ZkSession>> ZkSession::Open(const Settings& settings) {
  std::shared_ptr<ZkSession> s(new ZkSession(settings));
  const int64_t started = Now();
  const int timeout_ms = static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(settings.session_timeout), 1, INT32_MAX));
  // connect_timeout bounds the whole opening, the names' resolution
  // included.
  const int64_t connect_by =
      started + std::min<int64_t>(absl::ToInt64Nanoseconds(settings.connect_timeout),
                                  INT64_MAX - started);
  absl::StatusOr<std::string> servers =
      NumericServers(settings.servers, MonotonicDeadline::AtNanos(connect_by), settings.describe);
  if (!servers.ok()) return servers.status();
  zhandle_t* zh;
  {
    // The client's two threads start here and inherit this thread's mask.
    SignalsBlockedScope blocked;
    zh = ZooKeeper().zookeeper_init2(servers->c_str(), &ZkSession::OnWatch, timeout_ms,
                                     nullptr, s.get(), 0, &DropLog);
  }
  if (zh == nullptr) {
    const int err = errno;
    if (err == EINVAL || err == ENOENT || err == 0) {
      return TransientError(settings.describe, "",
                            absl::StrCat("the ZooKeeper client refused the servers \"", *servers,
                                         "\""));
    }
    return ErrnoError(err, settings.describe, "", "zookeeper_init");
  }
  // The client is given numeric addresses, but would still call
  // getaddrinfo() on them on every turn of its I/O thread's loop. glibc's
  // getaddrinfo() holds a process-wide lock meanwhile, and a fork() that
  // lands then leaves the child with that lock taken forever: its first
  // getaddrinfo() (its own session) hangs. The names themselves are
  // resolved again when a new session is opened.
  ZooKeeper().zoo_set_servers_resolution_delay(zh, -1);
  {
    std::unique_lock<std::mutex> lock(s->mu_);
    s->zh_ = zh;
    const auto up = [&] { return s->connected() || s->expired(); };
    // A server that is down refuses the connection at once, but the client
    // library only tries the next one, and again, quietly, until the
    // timeout. So after a grace period without a session, in which a
    // server that listens has long answered, a refusal by every server
    // ends the wait: a DSN with a wrong port fails now, not after
    // connect_timeout. The probe's connection reaches a server only when
    // one listens yet made no session in the grace period.
    const absl::Duration left =
        std::max(absl::ZeroDuration(), absl::Nanoseconds(connect_by - Now()));
    const absl::Duration grace = std::min(kRefusalGrace, left);
    if (!WaitOnCondition(s->connected_cv_, lock, ForPlatform(Deadline::In(grace)), up)) {
      lock.unlock();
      const bool refused = EveryServerRefuses(*servers);
      lock.lock();
      if (refused && !up()) {
        return TransientError(settings.describe, "",
                              absl::StrCat("every ZooKeeper server refused the connection (",
                                           settings.servers, "): none is listening there"));
      }
      WaitOnCondition(s->connected_cv_, lock, MonotonicDeadline::AtNanos(connect_by), up);
    }
  }
  if (!s->connected()) {
    return TransientError(settings.describe, "",
                          absl::StrCat(s->expired() ? "the servers refused the session"
                                                    : "no ZooKeeper server answered",
                                       " (", settings.servers, ") within connect_timeout ",
                                       absl::FormatDuration(settings.connect_timeout)));
  }
  const clientid_t* id = ZooKeeper().zoo_client_id(zh);
  s->id_ = id != nullptr ? id->client_id : 0;
  s->timeout_ = absl::Milliseconds(ZooKeeper().zoo_recv_timeout(zh));
  // The servers made the session after this moment.
  s->Answered(started);
  return s;
}

ZkSession::~ZkSession() {
  // In a forked child the handle's threads are the parent's: closing would
  // wait for them forever, and telling the servers to close would end the
  // parent's session. The child leaves it be.
  if (zh_ != nullptr && pid_ == CurrentPid()) ZooKeeper().zookeeper_close(zh_);
}

void ZkSession::Answered(int64_t sent_nanos) {
  int64_t seen = last_answered_sent_.load(std::memory_order_relaxed);
  while (sent_nanos > seen &&
         !last_answered_sent_.compare_exchange_weak(seen, sent_nanos,
                                                   std::memory_order_acq_rel)) {
  }
}

void ZkSession::OnWatch(zhandle_t* zh, int type, int state, const char* path, void* ctx) {
  static_cast<ZkSession*>(ctx)->HandleEvent(zh, type, state, path);
}

void ZkSession::HandleEvent(zhandle_t* zh, int type, int state, const char* path) {
  if (type != *ZooKeeper().ZOO_SESSION_EVENT) {
    if (path != nullptr) RingPath(path);
    return;
  }
  if (state == *ZooKeeper().ZOO_CONNECTED_STATE) {
    connected_.store(true, std::memory_order_release);
    std::lock_guard<std::mutex> guard(mu_);
    connected_cv_.notify_all();
    StartJobsLocked(zh);
  } else if (state == *ZooKeeper().ZOO_EXPIRED_SESSION_STATE ||
             state == *ZooKeeper().ZOO_AUTH_FAILED_STATE) {
    expired_.store(true, std::memory_order_release);
    connected_.store(false, std::memory_order_release);
    std::lock_guard<std::mutex> guard(mu_);
    jobs_.clear();  // the servers deleted every ephemeral node
    connected_cv_.notify_all();
  } else {
    connected_.store(false, std::memory_order_release);
  }
  RingSession();
  // Waiters learn of an expiry from their bells too.
  if (expired()) {
    std::unordered_map<std::string, std::vector<std::shared_ptr<ZkBell>>> bells;
    {
      std::lock_guard<std::mutex> guard(mu_);
      bells.swap(path_bells_);
    }
    for (auto& [p, list] : bells) {
      for (const std::shared_ptr<ZkBell>& b : list) b->Ring();
    }
  }
}

void ZkSession::RingPath(const std::string& path) {
  std::vector<std::shared_ptr<ZkBell>> bells;
  {
    std::lock_guard<std::mutex> guard(mu_);
    auto it = path_bells_.find(path);
    if (it == path_bells_.end()) return;
    bells.swap(it->second);
    path_bells_.erase(it);
  }
  for (const std::shared_ptr<ZkBell>& b : bells) b->Ring();
}

void ZkSession::RingSession() {
  std::vector<std::shared_ptr<ZkBell>> bells;
  {
    std::lock_guard<std::mutex> guard(mu_);
    bells = session_bells_;
  }
  for (const std::shared_ptr<ZkBell>& b : bells) b->Ring();
}

void ZkSession::Listen(const std::string& path, std::shared_ptr<ZkBell> bell) {
  std::lock_guard<std::mutex> guard(mu_);
  std::vector<std::shared_ptr<ZkBell>>& v = path_bells_[path];
  if (std::find(v.begin(), v.end(), bell) == v.end()) v.push_back(std::move(bell));
}

void ZkSession::Unlisten(const std::string& path, const ZkBell* bell) {
  std::lock_guard<std::mutex> guard(mu_);
  auto it = path_bells_.find(path);
  if (it == path_bells_.end()) return;
  auto& v = it->second;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](const std::shared_ptr<ZkBell>& b) { return b.get() == bell; }),
          v.end());
  if (v.empty()) path_bells_.erase(it);
}

void ZkSession::ListenSession(std::shared_ptr<ZkBell> bell) {
  std::lock_guard<std::mutex> guard(mu_);
  session_bells_.push_back(std::move(bell));
}

void ZkSession::UnlistenSession(const ZkBell* bell) {
  std::lock_guard<std::mutex> guard(mu_);
  session_bells_.erase(std::remove_if(session_bells_.begin(), session_bells_.end(),
                                      [&](const std::shared_ptr<ZkBell>& b) {
                                        return b.get() == bell;
                                      }),
                       session_bells_.end());
}

void ZkSession::WatchNode(const std::string& path) {
  struct WatchBox {
    ZkSession* session;
    std::string path;
  };
  auto* box = new WatchBox{this, path};
  const int rc = ZooKeeper().zoo_aexists(
      zh_, box->path.c_str(), 1,
      [](int rc, const struct Stat*, const void* data) {
        std::unique_ptr<WatchBox> b(static_cast<WatchBox*>(const_cast<void*>(data)));
        if (rc == ZNONODE) b->session->RingPath(b->path);
      },
      box);
  if (rc != ZOK) delete box;
}

}  // namespace ipclock
