// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// PostgreSqlStore: advisory session locks, one server session per held Key.
// See include/ipclock/stores/postgres_store.h for the contract; the caveats of
// advisory locks are written beside the code that deals with them.

#include "stores/postgres/postgres_store.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/capability_flags.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "platform/libpq_calls.h"
#include "platform/process_id.h"
#include "ipclock/spi/store_interface.h"
#include "stores/connections/postgres_conn.h"
#include "stores/connections/postgres_dsn.h"
#include "stores/postgres/postgres_lock_id.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "postgresql+advisory";

// How long a statement that does not wait on a lock may take to answer
// before the session is given up as unreachable.
constexpr absl::Duration kReplyTimeout = absl::Seconds(10);
// How long past a wait's deadline the reply may take: the server ends the
// wait itself (lock_timeout); this only covers a server or network that
// stopped answering.
constexpr absl::Duration kWaitGrace = absl::Seconds(5);

// A check of one held lock may use the answer that another lock's check
// got this recently (one query told of every session's advisory locks):
// the watch checks the locks of a store together, and so one query a round
// answers them all. Only a "still held" is taken from it; a lock missing
// from it is asked about on its own session.
constexpr int64_t kSharedCheckNanos = 100 * 1000 * 1000;

struct PgKeyState final : KeyState {
  // The key's own session while it holds the lock; the lock dies with it.
  PgConnection conn;
  int64_t id = 0;
  bool held = false;
  // Set when it last acquired: the session's server process, and when
  // (monotonic ns), for a shared check's answer asked for after it.
  int backend_pid = 0;
  int64_t held_since = 0;
  LockMode mode = LockMode::kExclusive;
  // Why the lock was lost, kept until the key acquires again so that a
  // release after the loss says so instead of succeeding.
  std::string lost;
};

absl::string_view LockFunction(LockMode mode, bool wait) {
  if (mode == LockMode::kShared) {
    return wait ? "pg_advisory_lock_shared" : "pg_try_advisory_lock_shared";
  }
  return wait ? "pg_advisory_lock" : "pg_try_advisory_lock";
}

absl::string_view UnlockFunction(LockMode mode) {
  return mode == LockMode::kShared ? "pg_advisory_unlock_shared"
                                   : "pg_advisory_unlock";
}

std::string DescribeOptions(const PostgresStoreOptions& options) {
  std::string out = DescribePgConninfo(kName, options.conninfo);
  if (options.scheme == PostgresLockIdScheme::kSymfony) {
    absl::StrAppend(&out, "?scheme=symfony");
  } else if (options.scheme == PostgresLockIdScheme::kLaravel) {
    absl::StrAppend(&out, "?scheme=laravel");
  }
  return out;
}

class PostgresStore final : public StoreWithState<PgKeyState> {
 public:
  PostgresStore(PostgresStoreOptions options, std::string describe)
      : options_(std::move(options)), describe_(std::move(describe)),
        pool_pid_(CurrentPid()) {}

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override { return PostgresCapabilities(); }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status Release(Key& key) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

  absl::StatusOr<PgConnection> Connect() const;
  void ReturnConnection(PgConnection conn);

 private:
  absl::StatusOr<PgConnection> TakeConnection(bool* pooled);
  absl::StatusOr<bool> LockOn(PGconn* conn, const Key& key, int64_t id,
                              LockMode mode, Deadline deadline) const;
  // Ends the key's claim on a lock whose session is gone (or unusable):
  // Aborted saying so, remembered for a later release.
  absl::Status MarkLost(Key& key, PgKeyState* st, const absl::Status& why);
  // For a key that holds nothing: Aborted saying how its lock was lost, if
  // it was, else OK.
  absl::Status LossReport(const Key& key, const PgKeyState* st) const {
    if (st->lost.empty()) return absl::OkStatus();
    return LostError(describe_, key.resource(), st->lost);
  }
  absl::Status Foreign(const Key& key) const {
    return ParentAcquiredError(describe_, key.resource(), "key",
                               "its session and lock belong to the parent");
  }

  // One granted advisory lock of a session: its server process, the lock
  // id's halves, and whether it is shared.
  using HeldRow = std::tuple<int, uint32_t, uint32_t, bool>;
  // The answer of a shared check, from `st`'s session: the advisory locks
  // of every session that held a lock of this store when it was asked.
  // True if `st`'s lock is among them; false if not, or if the query could
  // not be made (the caller then asks on its own).
  bool HeldPerSharedCheck(PgKeyState* st);
  // A session that no longer holds a lock of this store leaves the shared
  // check's list.
  void ForgetBackend(const PgKeyState& st) {
    std::lock_guard<std::mutex> guard(check_mu_);
    backends_.erase(st.backend_pid);
  }

  const PostgresStoreOptions options_;
  const std::string describe_;
  std::mutex mu_;
  std::vector<PgConnection> idle_;  // guarded by mu_
  pid_t pool_pid_;                  // guarded by mu_
  // The server processes of the sessions that hold a lock of this store,
  // and the last shared check's answer.
  std::mutex check_mu_;
  absl::flat_hash_set<int> backends_;      // guarded by check_mu_
  int64_t shared_asked_at_ = 0;            // guarded by check_mu_
  absl::flat_hash_set<int> shared_pids_;   // guarded by check_mu_
  absl::flat_hash_set<HeldRow> shared_rows_;  // guarded by check_mu_
};

bool PostgresStore::HeldPerSharedCheck(PgKeyState* st) {
  const int64_t now = Deadline::NowNanos();
  std::string pids;
  {
    std::lock_guard<std::mutex> guard(check_mu_);
    if (shared_asked_at_ > st->held_since && now - shared_asked_at_ < kSharedCheckNanos &&
        shared_pids_.contains(st->backend_pid)) {
      return shared_rows_.contains(HeldRow(st->backend_pid, static_cast<uint64_t>(st->id) >> 32,
                                           static_cast<uint64_t>(st->id) & 0xffffffffu,
                                           st->mode == LockMode::kShared));
    }
    if (backends_.size() < 2) return false;  // nothing to share
    for (int pid : backends_) absl::StrAppend(&pids, pids.empty() ? "" : ",", pid);
  }
  const int64_t asked_at = Deadline::NowNanos();
  absl::StatusOr<PgResult> r = PgExec(
      st->conn.get(),
      absl::StrCat("SELECT pid, classid, objid, mode = 'ShareLock' FROM pg_locks WHERE "
                   "locktype = 'advisory' AND granted AND objsubid = 1 AND pid IN (",
                   pids, ")"),
      Deadline::In(kReplyTimeout));
  if (!r.ok() || PgFailed(r->get())) return false;
  absl::flat_hash_set<int> asked;
  for (absl::string_view pid : absl::StrSplit(pids, ',')) {
    int value;
    if (absl::SimpleAtoi(pid, &value)) asked.insert(value);
  }
  absl::flat_hash_set<HeldRow> rows;
  for (int i = 0; i < Libpq().PQntuples(r->get()); ++i) {
    int pid;
    uint32_t classid, objid;
    if (!absl::SimpleAtoi(Libpq().PQgetvalue(r->get(), i, 0), &pid) ||
        !absl::SimpleAtoi(Libpq().PQgetvalue(r->get(), i, 1), &classid) ||
        !absl::SimpleAtoi(Libpq().PQgetvalue(r->get(), i, 2), &objid)) {
      continue;
    }
    rows.insert(HeldRow(pid, classid, objid,
                        absl::string_view(Libpq().PQgetvalue(r->get(), i, 3)) == "t"));
  }
  std::lock_guard<std::mutex> guard(check_mu_);
  if (asked_at > shared_asked_at_) {
    shared_asked_at_ = asked_at;
    shared_pids_ = std::move(asked);
    shared_rows_ = std::move(rows);
  }
  return shared_pids_.contains(st->backend_pid) &&
         shared_rows_.contains(HeldRow(st->backend_pid, static_cast<uint64_t>(st->id) >> 32,
                                       static_cast<uint64_t>(st->id) & 0xffffffffu,
                                       st->mode == LockMode::kShared));
}

absl::StatusOr<PgConnection> PostgresStore::Connect() const {
  absl::StatusOr<PgConnection> conn = PgConnect(options_.conninfo, describe_);
  if (!conn.ok()) return conn.status();
  // idle_session_timeout (PostgreSQL 14+) would end a session that holds a
  // lock and sends nothing, which is what a lock holder does.
  if (Libpq().PQserverVersion(conn->get()) >= 140000) {
    absl::StatusOr<PgResult> r = PgExec(conn->get(), "SET idle_session_timeout = 0",
                                        Deadline::In(kReplyTimeout));
    if (!r.ok()) {
      return TransientError(describe_, "",
                            absl::StrCat("set up a new session: ", r.status().message()));
    }
    if (PgFailed(r->get())) {
      return PgFaultOf(PgSqlState(r->get()))(
          describe_, "", absl::StrCat("set up a new session: ", PgErrorText(r->get())));
    }
  }
  return conn;
}

absl::StatusOr<PgConnection> PostgresStore::TakeConnection(bool* pooled) {
  *pooled = false;
  for (;;) {
    PgConnection c;
    std::vector<PgConnection> inherited;  // closed after the mutex is let go
    {
      std::lock_guard<std::mutex> guard(mu_);
      if (pool_pid_ != CurrentPid()) {
        // A forked child: the pooled sessions are the parent's.
        inherited.swap(idle_);
        pool_pid_ = CurrentPid();
      }
      if (idle_.empty()) break;
      c = std::move(idle_.back());
      idle_.pop_back();
    }
    // A session the server ended while it sat in the pool (a restart,
    // pg_terminate_backend) has its goodbye and end of file waiting on the
    // socket: one read without waiting finds it, not a failed lock request.
    if (PgConsumeInput(c.get())) {
      *pooled = true;
      return c;
    }
  }
  return Connect();
}

void PostgresStore::ReturnConnection(PgConnection conn) {
  // Only a clean, idle session of this process may serve another key: one
  // with a query still in flight (a reply that never came) is closed.
  if (!conn.ours() || !conn.looks_alive() ||
      Libpq().PQtransactionStatus(conn.get()) != PQTRANS_IDLE) {
    return;  // closed by its destructor
  }
  std::lock_guard<std::mutex> guard(mu_);
  if (pool_pid_ == CurrentPid() && idle_.size() < options_.max_idle) {
    idle_.push_back(std::move(conn));
    return;
  }
  // Over the cap: the destructor closes it. PQfinish only queues a
  // Terminate message, so holding the mutex meanwhile costs nothing.
}

// One lock request on `conn`. A try is one pg_try_advisory_lock*. A wait is
// one pg_advisory_lock* under SET LOCAL lock_timeout: the server queues the
// request and grants it the moment the holder lets go, or gives up with
// lock_not_available when the timeout runs out, so nothing here polls. The
// three statements go in one message, which PostgreSQL runs as one implicit
// transaction, so the LOCAL settings end with it whatever happens and the
// session's own lock_timeout is back in force for whoever uses it next.
// statement_timeout is turned off too, since a role's default would cut a
// long wait short with an unrelated error; lock_timeout 0 waits forever.
absl::StatusOr<bool> PostgresStore::LockOn(PGconn* conn, const Key& key,
                                           int64_t id, LockMode mode,
                                           Deadline deadline) const {
  const bool wait = !deadline.has_passed();
  std::string sql;
  Deadline reply_by = Deadline::In(kReplyTimeout);
  if (!wait) {
    sql = absl::StrCat("SELECT ", LockFunction(mode, false), "(", id, ")");
  } else {
    int64_t timeout_ms = 0;
    if (!deadline.is_never()) {
      // Rounded up and at least 1: lock_timeout = 0 would mean forever.
      timeout_ms = std::max<int64_t>(
          1, absl::ToInt64Milliseconds(
                 absl::Ceil(deadline.Remaining(), absl::Milliseconds(1))));
      timeout_ms = std::min<int64_t>(timeout_ms, INT32_MAX);
      reply_by = Deadline::In(deadline.Remaining() + kWaitGrace);
    } else {
      reply_by = Deadline::Never();
    }
    sql = absl::StrCat("SET LOCAL lock_timeout = ", timeout_ms,
                       "; SET LOCAL statement_timeout = 0; SELECT ",
                       LockFunction(mode, true), "(", id, ")");
  }
  absl::StatusOr<PgResult> r = PgExec(conn, sql, reply_by);
  if (!r.ok()) {
    return TransientError(describe_, key.resource(),
                          absl::StrCat("lock: ", r.status().message()));
  }
  const PGresult* res = r->get();
  if (PgFailed(res)) {
    const std::string state = PgSqlState(res);
    if (state == kLockNotAvailable) return false;  // still held at the deadline
    if (state == kDeadlockDetected) {
      // Two sessions each waiting for a lock the other holds, e.g. two
      // readers both promoting. The server broke the cycle by failing us.
      return LostError(describe_, key.resource(),
                       absl::StrCat("the server detected a deadlock and "
                                    "cancelled this wait: ",
                                    PgErrorText(res)));
    }
    return PgFaultOf(state)(describe_, key.resource(),
                            absl::StrCat("lock: ", PgErrorText(res)));
  }
  if (wait) return true;  // pg_advisory_lock returns only once granted
  if (Libpq().PQntuples(res) != 1 || Libpq().PQnfields(res) != 1) {
    return UnexpectedError(describe_, key.resource(),
                           "lock: unexpected reply shape");
  }
  return absl::string_view(Libpq().PQgetvalue(res, 0, 0)) == "t";
}

absl::Status PostgresStore::MarkLost(Key& key, PgKeyState* st,
                                     const absl::Status& why) {
  absl::string_view said = why.message();
  absl::ConsumePrefix(&said, "the server ended the session: ");  // said below
  std::string reason(said);
  // The server's own word, when it said one before it closed the session
  // (pg_terminate_backend, a shutdown): "FATAL: terminating connection due
  // to administrator command". libpq's guess that follows ("the server
  // terminated abnormally") would then mislead.
  const std::string& notice = st->conn.last_notice();
  if (!notice.empty() && Libpq().PQstatus(st->conn.get()) == CONNECTION_BAD) {
    reason = absl::StrCat(notice, "; then it closed the connection");
  }
  st->conn.Close();
  st->held = false;
  ForgetBackend(*st);
  st->lost = absl::StrCat("the session ended: ", reason,
                          " (the server releases a session's advisory locks when "
                          "it ends; another session may hold the lock now)");
  return LostError(describe_, key.resource(), st->lost);
}

// One query on the key's own session: its backend still holds the advisory
// lock, in the mode the key took. pg_locks is the lock manager's own view
// (the query takes each lock partition's lightweight lock in turn, briefly);
// a lock taken with a 64-bit key shows as classid = high 32 bits, objid =
// low 32 bits, objsubid = 1. Input the server sent unasked is read first, so
// that a session the server already ended is seen without a query, and the
// socket the watch polls does not stay readable.
absl::Status PostgresStore::CheckHeld(Key& key) {
  PgKeyState* st = state(key);
  if (st == nullptr || !st->held) {
    return LostError(describe_, key.resource(),
                     st != nullptr && !st->lost.empty() ? st->lost
                                                        : "the lock is not held");
  }
  if (!st->conn.ours()) return Foreign(key);
  if (!PgConsumeInput(st->conn.get())) {
    return MarkLost(key, st, TransientError(PgConnError(st->conn.get())));
  }
  if (HeldPerSharedCheck(st)) return absl::OkStatus();
  const uint64_t id = static_cast<uint64_t>(st->id);
  absl::StatusOr<PgResult> r = PgExec(
      st->conn.get(),
      absl::StrCat("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                   "pid = pg_backend_pid() AND granted AND classid = ",
                   id >> 32, " AND objid = ", id & 0xffffffffu, " AND objsubid = 1 AND mode = '",
                   st->mode == LockMode::kShared ? "ShareLock" : "ExclusiveLock", "'"),
      Deadline::In(kReplyTimeout));
  if (!r.ok()) return MarkLost(key, st, r.status());
  if (PgFailed(r->get())) {
    return PgFaultOf(PgSqlState(r->get()))(describe_, key.resource(),
                                           absl::StrCat("check: ", PgErrorText(r->get())));
  }
  if (Libpq().PQntuples(r->get()) == 1 &&
      absl::string_view(Libpq().PQgetvalue(r->get(), 0, 0)) != "0") {
    return absl::OkStatus();
  }
  // Only a statement on this session can unlock it, and only ipclock
  // speaks on it: someone ran pg_advisory_unlock_all() through a pooler
  // that shares sessions, or the like. Close the session to be sure
  // nothing of it lingers.
  st->conn.Close();
  st->held = false;
  ForgetBackend(*st);
  st->lost = "the advisory lock is no longer held by its session (released by "
             "a statement on it that ipclock did not send); the session was closed";
  return LostError(describe_, key.resource(), st->lost);
}

WatchTargets PostgresStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  PgKeyState* st = state(key);
  // The server closes the socket when it ends the session (a restart,
  // pg_terminate_backend, idle_session_timeout): readable at once.
  if (st != nullptr && st->held && st->conn.ours()) {
    const int fd = Libpq().PQsocket(st->conn.get());
    if (fd >= 0) targets.poll_fds.push_back(fd);
  }
  return targets;
}

absl::StatusOr<bool> PostgresStore::Acquire(Key& key, LockMode mode,
                                         Deadline deadline) {
  // The lock belongs to this process's session; no other process can
  // release it.
  KeyWriter(key).MarkUnserializable();
  PgKeyState* st = &EnsureState(key);
  if (st->conn.valid() && !st->conn.ours()) return Foreign(key);
  // Advisory locks stack: a second pg_advisory_lock in the same session
  // succeeds at once and needs a second unlock. The store takes each lock
  // once per key, so saving again is a no-op and one Delete releases.
  if (st->held && st->mode == mode) return true;

  if (st->held) {
    // Promotion or demotion on the key's own session. A session's locks
    // never conflict with each other, so the new mode is taken while the old
    // one is still held, and the old one let go after: unlike flock, the key
    // holds something at every instant, and a failed promotion keeps the
    // shared lock. Two readers that both wait to promote deadlock; the
    // server detects it and fails one of them (Aborted).
    absl::StatusOr<bool> got = LockOn(st->conn.get(), key, st->id, mode, deadline);
    if (!got.ok()) {
      if (!st->conn.looks_alive()) return MarkLost(key, st, got.status());
      return got.status();
    }
    if (!*got) return false;
    absl::StatusOr<PgResult> r = PgExec(
        st->conn.get(),
        absl::StrCat("SELECT ", UnlockFunction(st->mode), "(", st->id, ")"),
        Deadline::In(kReplyTimeout));
    if (!r.ok()) return MarkLost(key, st, r.status());
    if (PgFailed(r->get())) {
      // Both modes are held now; closing the session is the only way back
      // to a known state.
      absl::Status s = PgFaultOf(PgSqlState(r->get()))(
          describe_, key.resource(),
          absl::StrCat("unlock after changing mode: ", PgErrorText(r->get())));
      MarkLost(key, st, s).IgnoreError();
      return s;
    }
    st->mode = mode;
    return true;
  }

  st->lost.clear();
  st->id = PostgresLockId(key.resource(), options_.scheme);
  for (;;) {
    bool pooled = false;
    absl::StatusOr<PgConnection> conn = TakeConnection(&pooled);
    if (!conn.ok()) return conn.status();
    absl::StatusOr<bool> got = LockOn(conn->get(), key, st->id, mode, deadline);
    if (!got.ok()) {
      // A pooled session may have died while idle without a word on its
      // socket yet (a network cut). Nothing was held on it, so a retry on
      // another session is safe; there are at most max_idle pooled ones
      // before a fresh one, and the deadline still bounds the wait.
      const bool died = !conn->looks_alive();
      ReturnConnection(*std::move(conn));
      if (died && pooled) continue;
      return got.status();
    }
    if (!*got) {
      ReturnConnection(*std::move(conn));
      return false;
    }
    st->conn = *std::move(conn);
    st->held = true;
    st->mode = mode;
    st->held_since = Deadline::NowNanos();
    st->backend_pid = Libpq().PQbackendPID(st->conn.get());
    {
      std::lock_guard<std::mutex> guard(check_mu_);
      backends_.insert(st->backend_pid);
    }
    return true;
  }
}

absl::Status PostgresStore::Release(Key& key) {
  auto* st = state(key);
  if (st == nullptr) return absl::OkStatus();
  if (!st->held) return LossReport(key, st);
  if (!st->conn.ours()) return Foreign(key);
  absl::StatusOr<PgResult> r = PgExec(
      st->conn.get(),
      absl::StrCat("SELECT ", UnlockFunction(st->mode), "(", st->id, ")"),
      Deadline::In(kReplyTimeout));
  if (!r.ok()) return MarkLost(key, st, r.status());
  absl::Status failure;
  if (PgFailed(r->get())) {
    failure = PgFaultOf(PgSqlState(r->get()))(describe_, key.resource(),
                                              absl::StrCat("unlock: ", PgErrorText(r->get()),
                                                           "; the session was closed, which "
                                                           "releases the lock"));
  } else if (Libpq().PQntuples(r->get()) != 1 ||
             absl::string_view(Libpq().PQgetvalue(r->get(), 0, 0)) != "t") {
    // The server warns and returns false when the session held no such
    // lock: something ran an unlock on our session behind our back.
    failure = LostError(describe_, key.resource(),
                        absl::StrCat("the lock was no longer held at release: the "
                                     "server says its session did not hold it (",
                                     st->conn.last_notice(),
                                     "); the session was closed"));
  }
  st->held = false;
  ForgetBackend(*st);
  if (!failure.ok()) {
    st->conn.Close();  // whatever it still holds goes with it
    return failure;
  }
  ReturnConnection(std::move(st->conn));
  return absl::OkStatus();
}

absl::StatusOr<bool> PostgresStore::IsHeld(Key& key) {
  auto* st = state(key);
  if (st == nullptr || !st->held) return false;
  return HeldUnlessLost(CheckHeld(key));
}

}  // namespace

Capabilities PostgresCapabilities() {
  return MakeCapabilities(kPostgresEntry.scope, kCanBlock | kCanShare);
}

absl::StatusOr<std::shared_ptr<Store>> NewPostgresStore(
    const PostgresStoreOptions& given) {
  if (absl::Status s = LibpqLibrary().Load(kPostgresEntry.name); !s.ok()) return s;
  PostgresStoreOptions options = given;
  options.conninfo = WithPgDefaults(given.conninfo);
  std::string describe = DescribeOptions(options);
  if (absl::Status s = CheckPgConninfo(options.conninfo, describe); !s.ok()) return s;
  auto store = std::make_shared<PostgresStore>(std::move(options), describe);
  // One connection now: a wrong address or password should fail here, not
  // at the first lock. It then serves that first lock from the pool.
  absl::StatusOr<PgConnection> first = store->Connect();
  if (!first.ok()) return first.status();
  store->ReturnConnection(*std::move(first));
  return std::shared_ptr<Store>(std::move(store));
}

}  // namespace ipclock
