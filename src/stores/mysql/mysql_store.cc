// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// MySQL/MariaDB named locks (GET_LOCK), one server session per held Key.
// See include/ipclock/stores/mysql_store.h for the contract; the caveats of named
// locks are written beside the code that deals with them.

#include "stores/mysql/mysql_store.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/capability_flags.h"
#include "core/options_driver.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/errors.h"
#include "stores/connections/connection_pool.h"
#include "stores/connections/mysql_conn.h"
#include "stores/connections/mysql_dsn.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "mysql+advisory";

constexpr absl::Duration kReplyTimeout = absl::Seconds(kMyIoTimeoutSeconds);
// How long past a wait's own timeout the reply may take: the server ends the
// wait itself; this only covers a server or network that stopped answering.
constexpr absl::Duration kWaitGrace = absl::Seconds(5);

struct MyKeyState final : KeyState {
  // The key's own session while it holds the lock; the lock dies with it.
  MyConnection conn;
  // CONVERT(X'...' USING utf8mb4) of the server's lock name.
  std::string name_sql;
  bool held = false;
  // Why the lock was lost, kept until the key acquires again so that a
  // release after the loss says so instead of succeeding.
  std::string lost;
};

Capabilities MysqlAdvisoryCapabilities() {
  return MakeCapabilities(kMysqlAdvisoryEntry.scope, kCanBlock);
}

class MysqlAdvisoryStore final : public StoreWithState<MyKeyState> {
 public:
  MysqlAdvisoryStore(MysqlAdvisoryStoreOptions options, std::string describe)
      : options_(std::move(options)),
        describe_(std::move(describe)),
        session_setup_({absl::StrCat("SET SESSION wait_timeout = ",
                                     options_.wait_timeout_seconds)}),
        pool_(options_.max_idle) {}

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override { return MysqlAdvisoryCapabilities(); }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status Release(Key& key) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

  bool symfony() const {
    return options_.scheme == MysqlAdvisoryStoreOptions::Scheme::kSymfony;
  }

  absl::StatusOr<MyConnection> Connect() const {
    return MyConnect(options_.connection, session_setup_, describe_);
  }
  void ReturnConnection(MyConnection conn) { pool_.Put(std::move(conn)); }

 private:
  absl::StatusOr<bool> LockOn(MyConnection& conn, const Key& key,
                              const std::string& name_sql, Deadline deadline) const;
  // Closes the key's session and records why the lock is gone; Aborted.
  absl::Status MarkLost(Key& key, MyKeyState* st, absl::string_view why);
  absl::Status Foreign(const Key& key) const {
    return ParentAcquiredError(describe_, key.resource(), "key",
                               "its session and lock belong to the parent");
  }
  absl::Status Error(const Key& key, StoreErrorMaker fault, absl::string_view what) const {
    return fault(describe_, key.resource(), what);
  }

  const MysqlAdvisoryStoreOptions options_;
  const std::string describe_;
  const std::vector<std::string> session_setup_;
  ConnectionPool<MyConnection> pool_;
};

// GET_LOCK's timeout for one slice: seconds with millisecond precision,
// rounded up and at least 1 ms (0 would be a try).
std::string SliceSeconds(absl::Duration slice) {
  const int64_t ms = std::max<int64_t>(
      1, absl::ToInt64Milliseconds(absl::Ceil(slice, absl::Milliseconds(1))));
  return absl::StrFormat("%d.%03d", ms / 1000, ms % 1000);
}

// One lock request on `conn`: a try is GET_LOCK(name, 0); a wait is
// GET_LOCK with the time left, in slices of at most kWaitSlice. The server
// queues the request and grants it the moment the holder lets go, so
// nothing here polls; between slices the request leaves the queue for one
// round trip.
absl::StatusOr<bool> MysqlAdvisoryStore::LockOn(MyConnection& conn, const Key& key,
                                                const std::string& name_sql,
                                                Deadline deadline) const {
  for (;;) {
    std::string timeout = "0";
    absl::Duration slice = absl::ZeroDuration();
    if (!deadline.has_passed()) {
      // MariaDB refuses negative (endless) timeouts, and a reply that never
      // comes must be noticed: longer waits are slices.
      const absl::Duration longest = options_.wait_slice;
      slice = deadline.is_never() ? longest : std::min(deadline.Remaining(), longest);
      timeout = SliceSeconds(slice);
    }
    // Symfony's try, word for word: a session that holds the name already
    // says -1 rather than taking it a second time (each Key has a session
    // of its own here, so ours never does).
    const std::string sql =
        symfony() && slice == absl::ZeroDuration()
            ? absl::StrCat("SELECT IF(IS_USED_LOCK(", name_sql, ") = CONNECTION_ID(), -1, GET_LOCK(",
                           name_sql, ", 0))")
            : absl::StrCat("SELECT GET_LOCK(", name_sql, ", ", timeout, ")");
    absl::StatusOr<MyResult> r = MyQuery(conn, sql, Deadline::In(slice + kWaitGrace + kReplyTimeout));
    if (!r.ok()) return Error(key, TransientError,
                              absl::StrCat("lock: ", r.status().message()));
    if (r->failed()) {
      if (r->error == 1059) {  // ER_TOO_LONG_IDENT
        return Error(key, ConfigurationError,
                     absl::StrCat("the server refused the lock name as too long "
                                  "(MariaDB takes at most 192 bytes; a name of 64 "
                                  "characters or fewer is not hashed): ",
                                  r->ErrorText()));
      }
      if (r->error == 1213) {  // ER_LOCK_DEADLOCK
        return Error(key, LostError,
                     absl::StrCat("the server detected a deadlock and cancelled "
                                  "this wait: ", r->ErrorText()));
      }
      return Error(key, MyFaultOf(r->error), absl::StrCat("lock: ", r->ErrorText()));
    }
    if (r->rows.size() != 1 || r->rows[0].size() != 1) {
      return Error(key, UnexpectedError, "lock: unexpected reply shape");
    }
    const std::optional<std::string>& v = r->rows[0][0];
    if (!v) {
      // NULL: the wait was interrupted (KILL QUERY) or the server refused
      // the request; neither is contention.
      return Error(key, TransientError,
                   "lock: GET_LOCK returned NULL (the wait was interrupted on "
                   "the server)");
    }
    if (*v == "1" || *v == "-1") return true;
    if (deadline.has_passed()) return false;
  }
}

absl::Status MysqlAdvisoryStore::MarkLost(Key& key, MyKeyState* st,
                                          absl::string_view why) {
  st->conn.Close();
  st->held = false;
  st->lost = absl::StrCat("the lock is lost: ", why,
                          "; the server releases a session's named locks when "
                          "the session ends");
  return Error(key, LostError, st->lost);
}

absl::StatusOr<bool> MysqlAdvisoryStore::Acquire(Key& key, LockMode, Deadline deadline) {
  // The lock belongs to this process's session; no other process can
  // release it.
  KeyWriter(key).MarkUnserializable();
  MyKeyState* st = &EnsureState(key);
  if (st->conn.valid() && !st->conn.ours()) return Foreign(key);
  // Named locks stack in a session: a second GET_LOCK succeeds at once and
  // needs a second RELEASE_LOCK. The store takes each lock once per key, so
  // saving again is a no-op and one Delete releases.
  if (st->held) return true;
  st->lost.clear();
  st->name_sql = MyUtf8Literal(symfony() ? MysqlSymfonyLockName(key.resource())
                                         : MysqlLockName(key.resource()));
  for (int attempt = 0;; ++attempt) {
    bool pooled = false;
    absl::StatusOr<MyConnection> taken = pool_.TakeOrConnect([this] { return Connect(); }, &pooled);
    if (!taken.ok()) return taken.status();
    MyConnection conn = *std::move(taken);
    absl::StatusOr<bool> got = LockOn(conn, key, st->name_sql, deadline);
    if (!got.ok()) {
      // A pooled session may have died while idle (a server restart, an
      // administrator's KILL). Nothing was held on it, so one retry on a
      // fresh session is safe; the deadline still bounds it.
      // A session that failed to answer is out of step (a late reply may
      // still come) and never goes back to the pool.
      const bool unavailable = absl::IsUnavailable(got.status());
      const bool died = unavailable && !conn.looks_alive();
      if (!unavailable) ReturnConnection(std::move(conn));
      if (died && pooled && attempt == 0) continue;
      return got.status();
    }
    if (!*got) {
      ReturnConnection(std::move(conn));
      return false;
    }
    st->conn = std::move(conn);
    st->held = true;
    return true;
  }
}

absl::Status MysqlAdvisoryStore::Release(Key& key) {
  MyKeyState* st = state(key);
  if (st == nullptr) return absl::OkStatus();
  if (!st->held) {
    if (st->lost.empty()) return absl::OkStatus();
    return Error(key, LostError, st->lost);
  }
  if (!st->conn.ours()) return Foreign(key);
  absl::StatusOr<MyResult> r = MyQuery(
      st->conn, absl::StrCat("SELECT RELEASE_LOCK(", st->name_sql, ")"),
      Deadline::In(kReplyTimeout));
  if (!r.ok()) return MarkLost(key, st, r.status().message());
  st->held = false;
  if (r->failed()) {
    st->conn.Close();  // whatever it still holds goes with it
    return Error(key, MyFaultOf(r->error),
                 absl::StrCat("unlock: ", r->ErrorText(),
                              "; the session was closed, which releases the lock"));
  }
  const bool released = r->rows.size() == 1 && r->rows[0].size() == 1 &&
                        r->rows[0][0] && *r->rows[0][0] == "1";
  if (!released) {
    // 0: another session holds it; NULL: nobody does. Either way this
    // session had lost it, which only a RELEASE_LOCK or RELEASE_ALL_LOCKS
    // run on it behind our back can do.
    st->conn.Close();
    return Error(key, LostError,
                 "unlock: the server says this session did not hold the lock "
                 "(it was released on the session behind the store's back); "
                 "the session was closed");
  }
  ReturnConnection(std::move(st->conn));
  return absl::OkStatus();
}

// On the key's own session: IS_USED_LOCK names the session holding the
// lock, which must be this one. One round trip, nothing taken or released
// (but a session found dead is closed, which releases nothing of ours that
// the server had not already released).
absl::Status MysqlAdvisoryStore::CheckHeld(Key& key) {
  MyKeyState* st = state(key);
  if (st == nullptr || !st->held) {
    return Error(key, LostError,
                 st != nullptr && !st->lost.empty() ? st->lost : "the lock is not held");
  }
  if (!st->conn.ours()) return Foreign(key);
  absl::StatusOr<MyResult> r = MyQuery(
      st->conn, absl::StrCat("SELECT IS_USED_LOCK(", st->name_sql, ")"),
      Deadline::In(kReplyTimeout));
  if (!r.ok()) return MarkLost(key, st, r.status().message());
  if (r->failed()) return Error(key, MyFaultOf(r->error), r->ErrorText());
  uint64_t holder = 0;
  const bool ours = r->rows.size() == 1 && r->rows[0].size() == 1 && r->rows[0][0] &&
                    absl::SimpleAtoi(*r->rows[0][0], &holder) &&
                    holder == st->conn.session_id();
  if (ours) return absl::OkStatus();
  return MarkLost(key, st,
                  absl::StrCat("the server says session ",
                               r->rows.empty() || r->rows[0].empty() || !r->rows[0][0]
                                   ? std::string("(none)")
                                   : *r->rows[0][0],
                               " holds it, not this key's session ",
                               st->conn.session_id()));
}

absl::StatusOr<bool> MysqlAdvisoryStore::IsHeld(Key& key) {
  MyKeyState* st = state(key);
  if (st == nullptr || !st->held) return false;
  return HeldUnlessLost(CheckHeld(key));
}

WatchTargets MysqlAdvisoryStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  const MyKeyState* st = state(key);
  if (st != nullptr && st->held && st->conn.ours() && st->conn.socket() >= 0) {
    // The server closes the socket when it ends the session.
    targets.poll_fds.push_back(st->conn.socket());
  }
  return targets;
}

}  // namespace

namespace {

absl::Status CheckMysqlAdvisoryOptions(const MysqlAdvisoryStoreOptions& options,
                                       absl::string_view where) {
  if (options.wait_timeout_seconds < 1 || options.wait_timeout_seconds > 31536000) {
    return ConfigurationError(
        "ipclock: mysql+advisory: wait_timeout must be from 1 to 31536000 seconds");
  }
  if (options.wait_slice < absl::Milliseconds(10) || options.wait_slice > absl::Hours(1)) {
    return ConfigurationError(
        "ipclock: mysql+advisory: wait_slice must be from 0.01 to 3600 seconds");
  }
  return CheckMysqlConnection(options.connection, where);
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewMysqlAdvisoryStore(
    const MysqlAdvisoryStoreOptions& options) {
  if (absl::Status s = MariadbLibrary().Load(kMysqlAdvisoryEntry.name); !s.ok()) return s;
  const std::string describe = absl::StrCat(
      DescribeMysql(kName, options.connection),
      options.scheme == MysqlAdvisoryStoreOptions::Scheme::kSymfony ? " (scheme=symfony)" : "");
  if (absl::Status s = CheckMysqlAdvisoryOptions(options, describe); !s.ok()) return s;
  auto store = std::make_shared<MysqlAdvisoryStore>(options, describe);
  // One connection now: a wrong address or password should fail here, not
  // at the first lock. It then serves that first lock from the pool.
  absl::StatusOr<MyConnection> first = store->Connect();
  if (!first.ok()) return first.status();
  store->ReturnConnection(*std::move(first));
  return std::shared_ptr<Store>(std::move(store));
}

namespace {

absl::StatusOr<MysqlAdvisoryStoreOptions> MysqlAdvisoryOptionsFromDsn(Dsn& dsn) {
  if (!dsn.has_authority()) {
    return BadDsn(dsn, "expected mysql+advisory://user:password@host:port/db");
  }
  absl::StatusOr<MysqlConnectionOptions> connection = MysqlConnectionFromDsn(dsn);
  if (!connection.ok()) return connection.status();
  MysqlAdvisoryStoreOptions options;
  options.connection = *std::move(connection);
  using Scheme = MysqlAdvisoryStoreOptions::Scheme;
  absl::Status scheme = dsn.TakeChoiceInto(
      "scheme", {{"laravel", Scheme::kLaravel}, {"symfony", Scheme::kSymfony}}, &options.scheme);
  if (!scheme.ok()) return scheme;
  absl::StatusOr<long> max_idle = dsn.TakeInt("max_idle", 4, 0, 1024);
  if (!max_idle.ok()) return max_idle.status();
  options.max_idle = static_cast<size_t>(*max_idle);
  absl::StatusOr<long> wait_timeout =
      dsn.TakeInt("wait_timeout", options.wait_timeout_seconds, 1, 31536000);
  if (!wait_timeout.ok()) return wait_timeout.status();
  options.wait_timeout_seconds = *wait_timeout;
  absl::StatusOr<double> slice = dsn.TakeSeconds("wait_slice", 30, 3600);
  if (!slice.ok()) return slice.status();
  if (*slice < 0.01) {
    return BadDsn(dsn, absl::StrCat("option wait_slice=", *slice,
                                    ": expected 0.01 to 3600 seconds"));
  }
  options.wait_slice = absl::Seconds(*slice);
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return options;
}

absl::Status CheckMysqlAdvisoryDsn(const MysqlAdvisoryStoreOptions& options, const Dsn& dsn) {
  return CheckMysqlAdvisoryOptions(options, absl::StrCat("bad DSN \"", dsn.redacted(), "\""));
}

}  // namespace

const StoreDriver kMysqlAdvisoryDriver = {
    &PrepareFromOptions<&MysqlAdvisoryOptionsFromDsn, &CheckMysqlAdvisoryDsn,
                        &MysqlAdvisoryCapabilities, &NewMysqlAdvisoryStore>,
    &ListMysqlAdvisoryLocks, &MariadbLibrary};

}  // namespace ipclock
