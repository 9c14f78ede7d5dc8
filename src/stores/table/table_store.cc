// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table store's database-neutral core: Symfony's PdoStore semantics on
// one row per lock. See include/ipclock/stores/table_store.h for the contract.

#include "stores/table/table_store.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/backoff.h"
#include "core/capability_flags.h"
#include "core/hashing.h"
#include "core/store_errors.h"
#include "ipclock/errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/errors.h"
#include "platform/random.h"
#include "platform/sleep.h"
#include "stores/table/table_sql.h"

namespace ipclock {

namespace {

constexpr absl::Duration kPollFirst = absl::Milliseconds(10);
constexpr absl::Duration kPollMax = absl::Milliseconds(250);
// Statements rolled back to break a deadlock are run again this many times.
constexpr int kRetries = 6;
// The watch checks a held lock at least this often: a deleted row sends
// nothing, so only a check finds it, and the checks of a round cost one
// statement for all of a store's held locks (kSharedCheckNanos).
constexpr absl::Duration kCheckAtLeastEvery = absl::Milliseconds(100);
// A check of one held lock may take its answer from one statement, made
// this recently, that read the rows of every lock the store holds: the
// watch checks the locks of a store together, and so one statement a round
// answers them all. Only a "still held" is taken from it, and only from
// one asked for after the lock was taken; a row missing from it is asked
// about on its own before a loss is reported.
constexpr int64_t kSharedCheckNanos = 100 * 1000 * 1000;

// What the store knows of a key between calls: whether it holds the row as
// far as this process knows, so that a release that finds the row gone can
// tell a lost lock from a key that never held one.
struct TableKeyState final : KeyState {
  bool held = false;
  // When it last acquired (monotonic ns): a shared check's answer counts
  // only if it was asked for after.
  int64_t held_since = 0;
  // The database file, while the watch looks at it (SQLite only).
  ScopedFd watch_fd;
};

// The row's lease in whole seconds for a lease of `ttl`: rounded up, plus
// one. The server's "now" is a whole second that may lag the true time by up
// to a second (or lead it by half a second: PostgreSQL's cast rounds), so a
// row written at true time t with now + N expires no earlier than t + N - 1.
// With N = ceil(ttl) + 1 that is after t + ttl, where the holder's own count
// of the lease (started before the statement was sent) has already ended.
int64_t RowLeaseSeconds(absl::Duration ttl) {
  return static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(ttl))) + 1;
}

// Keys of this library have base64 tokens; a deserialized key brings the
// token from its text, whose checksum is no proof of origin. The token goes
// into the SQL text, so anything else is refused.
bool IsBase64Token(absl::string_view token) {
  if (token.size() != 44) return false;
  for (char c : token) {
    if (!absl::ascii_isalnum(c) && c != '+' && c != '/' && c != '=') return false;
  }
  return true;
}

class TableStore final : public StoreWithRelease<TableKeyState> {
 public:
  TableStore(absl::string_view name, std::string describe, Scope scope,
             TableStoreOptions options, std::unique_ptr<TableBackend> backend)
      : name_(name),
        describe_(std::move(describe)),
        scope_(scope),
        options_(std::move(options)),
        backend_(std::move(backend)),
        dialect_(backend_->dialect()) {}

  absl::string_view name() const override { return name_; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override { return TableCapabilities(scope_); }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status Extend(Key& key, absl::Duration ttl) override;
  // Release() and ReleaseAsDead(): `died` leaves the row expired, not gone,
  // as a holder that died would.
  absl::Status DoRelease(Key& key, bool died) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

 private:
  // The row's id and the key's token, checked.
  absl::Status IdAndToken(Key& key, std::string* id, std::string* token) const;
  // One statement; a failure other than those the caller handles becomes a
  // status naming the resource and `what`.
  absl::StatusOr<TableReply> Run(const Key& key, const std::string& sql,
                                 absl::string_view what);
  // INSERT, creating the table first if it is missing; then, on a
  // duplicate key, the take-over. True if the row is ours now;
  // `*took_over` then says whether it was there already (ours, or expired).
  absl::StatusOr<bool> TryOnce(const Key& key, const std::string& id,
                               const std::string& token, int64_t lease, bool* took_over);
  // CREATE TABLE; `*failed` gets the database's reply.
  absl::Status CreateTable(const Key& key, TableReply* failed);
  absl::StatusOr<bool> RowIsOurs(Key& key);
  // Whether one statement reading the rows of every lock this store holds,
  // asked for after `held_since` and within kSharedCheckNanos (made now if
  // none is), found row `id` with `token`, unexpired. False also when there
  // is nothing to share (one lock held) or the statement failed: the caller
  // then asks on its own.
  bool HeldPerSharedCheck(const Key& key, const std::string& id, const std::string& token,
                          int64_t held_since);
  void NoteHeld(const std::string& id, const std::string& token) {
    std::lock_guard<std::mutex> guard(check_mu_);
    held_.insert_or_assign(id, token);
  }
  void ForgetHeld(const std::string& id, const std::string& token) {
    std::lock_guard<std::mutex> guard(check_mu_);
    auto it = held_.find(id);
    if (it != held_.end() && it->second == token) held_.erase(it);
  }
  void MaybePrune();
  absl::Status Error(const Key& key, StoreErrorMaker fault, absl::string_view what) const {
    return fault(describe_, key.resource(), what);
  }
  // The error of a statement the database failed: "<what>: <its message>".
  absl::Status Failed(const Key& key, const TableReply& reply, absl::string_view what) const {
    return Error(key, reply.fault, absl::StrCat(what, ": ", reply.error));
  }

  const std::string name_;
  const std::string describe_;
  const Scope scope_;
  const TableStoreOptions options_;
  const std::unique_ptr<TableBackend> backend_;
  const TableDialect dialect_;
  // The rows of the locks this store holds (id to token), and what the
  // last shared check found. Not held across a statement.
  std::mutex check_mu_;
  absl::flat_hash_map<std::string, std::string> held_;  // guarded by check_mu_
  int64_t shared_asked_at_ = 0;                         // guarded by check_mu_
  absl::flat_hash_map<std::string, std::string> shared_found_;  // guarded by check_mu_
};

absl::Status TableStore::IdAndToken(Key& key, std::string* id, std::string* token) const {
  absl::StatusOr<absl::string_view> t = key.Token();
  if (!t.ok()) return t.status();
  if (!IsBase64Token(*t)) {
    return Error(key, ConfigurationError,
                 "the key's owner token is not 44 characters of base64");
  }
  *token = std::string(*t);
  *id = ToHex(Sha256(key.resource()));
  return absl::OkStatus();
}

absl::StatusOr<TableReply> TableStore::Run(const Key& key, const std::string& sql,
                                           absl::string_view what) {
  absl::StatusOr<TableReply> r = backend_->Run(sql);
  // A statement the database rolled back to break a deadlock did nothing:
  // run it again, a few times, after a short pause.
  for (int retry = 0; retry < kRetries && r.ok() &&
                      r->failure == TableReply::Failure::kRetry;
       ++retry) {
    MonotonicSleepFor(absl::Milliseconds(1 << retry));
    r = backend_->Run(sql);
  }
  if (r.ok() && r->failure == TableReply::Failure::kRetry) {
    return Error(key, TransientError,
                 absl::StrCat(what, ": ", r->error, " (", kRetries + 1, " attempts)"));
  }
  if (!r.ok()) {
    // A failed connect already names the store; the resource goes after it.
    absl::string_view message = r.status().message();
    absl::ConsumePrefix(&message, absl::StrCat(describe_, ": "));
    return Restated(r.status(), describe_, key.resource(), absl::StrCat(what, ": ", message));
  }
  return r;
}

absl::Status TableStore::CreateTable(const Key& key, TableReply* failed) {
  absl::StatusOr<TableReply> r = Run(key, CreateTableSql(dialect_, options_), "create table");
  if (!r.ok()) return r.status();
  // Another process may have created it a moment ago ("already exists", or
  // on PostgreSQL a unique violation in its catalog): whether the table is
  // there now is for the statement that follows to say. What the database
  // said is kept for when it is not.
  *failed = *std::move(r);
  return absl::OkStatus();
}

absl::StatusOr<bool> TableStore::TryOnce(const Key& key, const std::string& id,
                                         const std::string& token, int64_t lease,
                                         bool* took_over) {
  *took_over = false;
  const std::string insert = InsertSql(dialect_, options_, id, token, lease);
  absl::StatusOr<TableReply> r = Run(key, insert, "insert");
  if (!r.ok()) return r.status();
  if (r->failure == TableReply::Failure::kNoTable) {
    TableReply created;
    if (absl::Status s = CreateTable(key, &created); !s.ok()) return s;
    r = Run(key, insert, "insert");
    if (!r.ok()) return r.status();
    if (r->failure == TableReply::Failure::kNoTable) {
      // Still missing, and it could not be made: a schema or database that
      // does not exist (PostgreSQL's 3F000, MySQL's 1049), or the like.
      // The DSN's to fix, as PostgreSQL's class 42 and MySQL's 1146 say:
      // waiting does not make it. A user who may not create tables there
      // is refused, as the database said.
      StoreErrorMaker fault = ConfigurationError;
      if (created.failure == TableReply::Failure::kOther &&
          ClassOf(created.fault) == FaultClass::kRefused) {
        fault = created.fault;
      }
      return Error(key, fault,
                   absl::StrCat("table ", options_.table,
                                " does not exist and could not be created: ",
                                created.failure == TableReply::Failure::kNone ? r->error
                                                                              : created.error));
    }
  }
  if (r->failure == TableReply::Failure::kNone) return true;
  if (r->failure != TableReply::Failure::kDuplicateKey) {
    return Failed(key, *r, absl::StrCat("insert into ", options_.table));
  }
  // The row exists: ours (a save of a held key), expired (taken over), or
  // another holder's (the UPDATE matches nothing).
  r = Run(key, TakeOverSql(dialect_, options_, id, token, lease), "take over");
  if (!r.ok()) return r.status();
  if (r->failure != TableReply::Failure::kNone) {
    return Failed(key, *r, absl::StrCat("update ", options_.table));
  }
  *took_over = r->affected > 0;
  return r->affected > 0;
}

void TableStore::MaybePrune() {
  if (options_.gc_probability <= 0) return;
  if (options_.gc_probability < 1) {
    uint32_t draw = 0;
    if (!FillRandom(&draw, sizeof(draw)).ok()) return;
    if (static_cast<double>(draw) / 4294967296.0 >= options_.gc_probability) return;
  }
  // Best effort: an expired row excludes nobody, and the next collection
  // gets what this one missed.
  backend_->Run(PruneSql(dialect_, options_)).IgnoreError();
}

absl::StatusOr<bool> TableStore::Acquire(Key& key, LockMode, Deadline deadline) {
  const absl::Duration ttl = key.RemainingLifetime();
  if (ttl == absl::InfiniteDuration()) {
    return Error(key, ConfigurationError,
                 "the lease (LockOptions::ttl, --ttl) is without end, or too long to "
                      "count: expected a finite lease");
  }
  if (ttl <= absl::ZeroDuration()) {
    return Error(key, LostError,
                 "the lease ran out before the lock was acquired");
  }
  std::string id, token;
  if (absl::Status s = IdAndToken(key, &id, &token); !s.ok()) return s;
  const int64_t lease = RowLeaseSeconds(ttl);
  const TableKeyState* before = state(key);
  const bool held_before = before != nullptr && before->held;
  Backoff backoff(kPollFirst, kPollMax);
  backoff.SleepIfTriedJustNow(key, deadline);
  for (;;) {
    const int64_t sent = Deadline::NowNanos();
    bool took_over = false;
    absl::StatusOr<bool> got = TryOnce(key, id, token, lease, &took_over);
    if (!got.ok()) return got.status();
    if (*got) {
      // The lease counts from before the request went out, as the row's
      // does from when the server ran it: ours ends first.
      KeyWriter(key).ResetLifetime();
      KeyWriter(key).ReduceLifetime(ttl - absl::Nanoseconds(Deadline::NowNanos() - sent));
      // A row that was there and is not one we hold: its holder never
      // released it (a release deletes it), and its lease ran out. That
      // holder died, or stopped renewing, holding the lock.
      if (!held_before) KeyWriter(key).set_previous_owner_died(took_over);
      TableKeyState& st = EnsureState(key);
      st.held = true;
      st.held_since = Deadline::NowNanos();
      NoteHeld(id, token);
      MaybePrune();
      return true;
    }
    if (deadline.has_passed()) return false;
    backoff.Sleep(deadline);
  }
}

absl::Status TableStore::Extend(Key& key, absl::Duration ttl) {
  if (ttl == absl::InfiniteDuration()) {
    return Error(key, ConfigurationError,
                 "the lease (LockOptions::ttl, --ttl) is without end, or too long to "
                      "count: expected a finite lease");
  }
  if (!key.has_token()) {
    return Error(key, LostError,
                 "cannot refresh: this key never held the lock");
  }
  std::string id, token;
  if (absl::Status s = IdAndToken(key, &id, &token); !s.ok()) return s;
  // Symfony's refresh is its take-over: a row of ours whose lease ran out
  // and that nobody took is ours again. The caller's lease check then says
  // whether the gap mattered.
  absl::StatusOr<TableReply> r =
      Run(key, TakeOverSql(dialect_, options_, id, token, RowLeaseSeconds(ttl)), "refresh");
  if (!r.ok()) return r.status();
  if (r->failure == TableReply::Failure::kNoTable || r->affected == 0) {
    return Error(key, LostError,
                 "cannot refresh: the row of this lock is gone or another owner's "
                 "(its lease ran out and it was taken over, or it was deleted)");
  }
  if (r->failure != TableReply::Failure::kNone) {
    return Failed(key, *r, "refresh");
  }
  return absl::OkStatus();
}

absl::Status TableStore::DoRelease(Key& key, bool died) {
  // A key that never saved has no token, hence no row.
  if (!key.has_token()) return absl::OkStatus();
  TableKeyState* st = state(key);
  // A deserialized key (a token, no state) was handed over held.
  const bool held = st != nullptr ? st->held : true;
  if (st != nullptr) {
    st->held = false;  // whatever the database says, it lets go
    st->watch_fd.reset();
  }
  if (!held) return absl::OkStatus();
  std::string id, token;
  if (absl::Status s = IdAndToken(key, &id, &token); !s.ok()) return s;
  ForgetHeld(id, token);
  absl::StatusOr<TableReply> r =
      Run(key, died ? ExpireSql(options_, id, token) : DeleteSql(options_, id, token), "release");
  if (!r.ok()) {
    return Restated(r.status(), absl::StrCat(r.status().message(),
                                     " (the row stays until its lease runs out)"));
  }
  if (r->failure == TableReply::Failure::kNoTable || r->affected == 0) {
    return Error(key, LostError,
                 "the lock was lost while held: its row is gone or another "
                 "owner's (its lease ran out and it was taken over, or it was "
                 "deleted)");
  }
  if (r->failure != TableReply::Failure::kNone) {
    return Failed(key, *r, "release");
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> TableStore::RowIsOurs(Key& key) {
  std::string id, token;
  if (absl::Status s = IdAndToken(key, &id, &token); !s.ok()) return s;
  absl::StatusOr<TableReply> r = Run(key, ExistsSql(dialect_, options_, id, token), "check");
  if (!r.ok()) return r.status();
  if (r->failure == TableReply::Failure::kNoTable) return false;
  if (r->failure != TableReply::Failure::kNone) {
    return Failed(key, *r, "check");
  }
  return !r->rows.empty();
}

absl::StatusOr<bool> TableStore::IsHeld(Key& key) {
  if (!key.has_token()) return false;
  const TableKeyState* st = state(key);
  if (st != nullptr && !st->held) return false;
  return RowIsOurs(key);
}

absl::Status TableStore::CheckHeld(Key& key) {
  const TableKeyState* st = state(key);
  if (!key.has_token() || (st != nullptr && !st->held)) {
    return Error(key, LostError, "the lock is not held");
  }
  // The holder's own count of the lease ends before the row's: once it has
  // ended, the lock may be another's at any moment, whatever the row says.
  if (key.IsExpired()) {
    return Error(key, LostError, "the lease ran out");
  }
  if (st != nullptr) {
    std::string id, token;
    if (absl::Status s = IdAndToken(key, &id, &token); !s.ok()) return s;
    if (HeldPerSharedCheck(key, id, token, st->held_since)) return absl::OkStatus();
  }
  absl::StatusOr<bool> ours = RowIsOurs(key);
  if (!ours.ok()) return ours.status();
  if (*ours) return absl::OkStatus();
  if (key.has_token()) {
    std::string id, token;
    if (IdAndToken(key, &id, &token).ok()) ForgetHeld(id, token);
  }
  return Error(key, LostError,
               "the lock was lost while held: its row is gone, expired or "
               "another owner's");
}

bool TableStore::HeldPerSharedCheck(const Key& key, const std::string& id,
                                    const std::string& token, int64_t held_since) {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> guard(check_mu_);
    const int64_t now = Deadline::NowNanos();
    if (shared_asked_at_ > held_since && now - shared_asked_at_ < kSharedCheckNanos) {
      auto it = shared_found_.find(id);
      return it != shared_found_.end() && it->second == token;
    }
    if (held_.size() < 2) return false;  // nothing to share
    ids.reserve(held_.size());
    for (const auto& [held_id, held_token] : held_) ids.push_back(held_id);
  }
  const int64_t asked_at = Deadline::NowNanos();
  absl::StatusOr<TableReply> r = Run(key, HeldRowsSql(dialect_, options_, ids), "check");
  if (!r.ok() || r->failure != TableReply::Failure::kNone) return false;
  absl::flat_hash_map<std::string, std::string> found;
  for (const std::vector<std::string>& row : r->rows) {
    if (row.size() == 2) found.insert_or_assign(row[0], row[1]);
  }
  std::lock_guard<std::mutex> guard(check_mu_);
  if (asked_at > shared_asked_at_) {
    shared_asked_at_ = asked_at;
    shared_found_ = std::move(found);
  }
  if (shared_asked_at_ <= held_since) return false;
  auto it = shared_found_.find(id);
  return it != shared_found_.end() && it->second == token;
}

// A database in a file (SQLite) is watched for its deletion or renaming,
// which takes the held rows with it. A deleted row sends nothing: the
// checks find it, at least every kCheckAtLeastEvery.
WatchTargets TableStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  TableKeyState* st = state(key);
  if (st == nullptr || !st->held) return targets;
  if (!st->watch_fd.valid()) st->watch_fd = backend_->OpenWatchFd();
  if (st->watch_fd.valid()) targets.inode_fds.push_back(st->watch_fd.get());
  targets.check_at_least_every = kCheckAtLeastEvery;
  return targets;
}

}  // namespace

Capabilities TableCapabilities(Scope scope) {
  // The expiry column is a 32-bit Unix time (Symfony's INTEGER), which
  // ends in 2038: a year's lease keeps well inside it.
  return MakeCapabilities(scope, kCanExpire | kCanSerialize | kSeesOwnerDeath,
                          absl::Hours(24 * 365));
}

absl::StatusOr<std::shared_ptr<Store>> MakeTableStore(
    absl::string_view name, std::string describe, Scope scope,
    const TableStoreOptions& options, std::unique_ptr<TableBackend> backend) {
  if (absl::Status s = backend->Check(); !s.ok()) return s;
  if (absl::Status s = CheckTableNames(options); !s.ok()) return s;
  if (!(options.gc_probability >= 0 && options.gc_probability <= 1)) {
    return ConfigurationError(
        "ipclock: table store: gc_probability must be from 0 to 1");
  }
  return std::shared_ptr<Store>(std::make_shared<TableStore>(
      name, std::move(describe), scope, options, std::move(backend)));
}

namespace {

// Symfony's table options (db_table, db_id_col, db_token_col,
// db_expiration_col) and gc_probability.
absl::StatusOr<TableStoreOptions> TakeTableOptions(Dsn& dsn) {
  TableStoreOptions options;
  if (std::optional<std::string> v = dsn.TakeOption("db_table")) options.table = *v;
  if (std::optional<std::string> v = dsn.TakeOption("db_id_col")) options.id_column = *v;
  if (std::optional<std::string> v = dsn.TakeOption("db_token_col")) options.token_column = *v;
  if (std::optional<std::string> v = dsn.TakeOption("db_expiration_col")) {
    options.expiration_column = *v;
  }
  if (std::optional<std::string> v = dsn.TakeOption("gc_probability")) {
    double p;
    if (!absl::SimpleAtod(*v, &p) || !(p >= 0 && p <= 1)) {
      return BadDsn(dsn, absl::StrCat("option gc_probability=", *v,
                                      ": expected a number from 0 to 1"));
    }
    options.gc_probability = p;
  }
  if (absl::Status s = CheckTableNames(options); !s.ok()) {
    // In a DSN, the name is an option's value.
    return BadDsn(dsn, absl::StrCat("option ",
                                    absl::StripPrefix(s.message(), "ipclock: table store: ")));
  }
  return options;
}

}  // namespace

absl::Status TakeTableDsnTail(Dsn& dsn, size_t* max_idle, TableStoreOptions* table) {
  if (max_idle != nullptr) {
    if (absl::Status s = dsn.TakeIntInto("max_idle", max_idle, 0, 1024); !s.ok()) return s;
  }
  absl::StatusOr<TableStoreOptions> taken = TakeTableOptions(dsn);
  if (!taken.ok()) return taken.status();
  *table = *std::move(taken);
  return dsn.CheckAllOptionsUsed();
}


absl::StatusOr<HeldLocks> ListTableLocks(TableBackend& backend, absl::string_view store,
                                         const TableStoreOptions& options,
                                         const ListRequest& request) {
  std::optional<std::string> id;
  if (request.resource) id = ToHex(Sha256(*request.resource));
  absl::StatusOr<TableReply> r = backend.Run(ListSql(backend.dialect(), options, id));
  if (!r.ok()) return r.status();
  HeldLocks out;
  out.store = std::string(store);
  if (r->failure == TableReply::Failure::kNoTable) return out;
  if (r->failure != TableReply::Failure::kNone) {
    return ErrorOf(r->fault,
                   absl::StrCat("ipclock: list the rows of ", options.table, ": ",
                                     r->error));
  }
  for (const std::vector<std::string>& row : r->rows) {
    if (row.size() != 2) continue;
    HeldLock lock;
    lock.object = absl::StrCat(options.table, ".", options.id_column, "=", row[0]);
    if (request.resource) lock.resource = *request.resource;
    lock.mode = "exclusive";
    int64_t left = 0;
    if (absl::SimpleAtoi(row[1], &left)) lock.number_details.emplace_back("expires_in_s", left);
    out.locks.push_back(std::move(lock));
  }
  return out;
}

}  // namespace ipclock
