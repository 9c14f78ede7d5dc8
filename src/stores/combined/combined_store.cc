// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// CombinedStore: one lock held in several member stores under a strategy
// (include/ipclock/stores/combined_store.h has the rules). The combined store keeps
// its own state in the Key beside the members' states: which members hold
// the key and in which mode, so that a failed attempt can give back exactly
// what it took and a failed conversion can put back what was held before.

#include "stores/combined/combined_store.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "core/backoff.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/condition_wait.h"
#include "stores/combined/combined_member_check.h"
#include "stores/combined/combined_verdict.h"

namespace ipclock {

Capabilities CombinedCapabilities(const std::vector<Capabilities>& members) {
  Capabilities c;
  c.blocking = false;
  c.expiring = false;
  c.shared = true;
  c.serializable = true;
  c.owner_death = false;  // reported, but not exactly: see the header
  c.fencing = false;
  c.counting = false;
  c.scope = Scope::kRemote;
  for (const Capabilities& m : members) {
    c.expiring = c.expiring || m.expiring;
    c.shared = c.shared && m.shared;
    c.serializable = c.serializable && m.serializable;
    c.scope = std::min(c.scope, m.scope);
    if (m.expiring) c.max_lease = std::min(c.max_lease, m.max_lease);
  }
  return c;
}

namespace {

constexpr absl::string_view kName = "combined";

// The waits poll: a member cannot wake a waiter that also needs the others.
constexpr absl::Duration kFirstBackoff = absl::Milliseconds(1);
constexpr absl::Duration kMaxBackoff = absl::Milliseconds(50);
// While a check waits for a member's server, the members that answer at
// once are asked again this often: their loss may decide the verdict.
constexpr absl::Duration kRecheck = kWatchProbeInterval;

struct CombinedKeyState : KeyState {
  explicit CombinedKeyState(size_t members)
      : held(members, false), checks(members),
        board(std::make_shared<MemberCheckBoard>()) {}
  ~CombinedKeyState() override {
    // A forked child's copies never finish: their threads are the parent's.
    for (std::unique_ptr<MemberCheck>& c : checks) {
      if (c != nullptr && c->Orphaned()) c.release();
    }
  }
  std::vector<bool> held;  // by member index
  LockMode mode = LockMode::kExclusive;
  // Checks of members still under way on threads of their own (by member
  // index), which hold that member's state in the key until they finish.
  std::vector<std::unique_ptr<MemberCheck>> checks;
  std::shared_ptr<MemberCheckBoard> board;
};

size_t CountHeld(const std::vector<bool>& held) {
  return static_cast<size_t>(std::count(held.begin(), held.end(), true));
}

// What one pass over the members gave.
struct Tally {
  size_t succeeded = 0;
  size_t refused = 0;  // contention
  size_t failed = 0;   // errors
  std::vector<bool> took;  // by member index: Acquire said true in this pass
  std::vector<std::string> errors;
  // A member's failure, for its code, if they all failed alike (a lease
  // that ran out is Aborted everywhere), else a transient one; OK before
  // any failed.
  absl::Status fault;
  bool owner_died = false;

  void AddError(const absl::Status& s) {
    ++failed;
    errors.push_back(std::string(s.message()));
    if (fault.ok()) {
      fault = s;
    } else if (fault.code() != s.code()) {
      fault = TransientError("the members failed differently");
    }
  }
};


class CombinedStore final : public StoreWithState<CombinedKeyState> {
 public:
  CombinedStore(std::vector<std::shared_ptr<Store>> members,
                CombineStrategy strategy)
      : members_(std::move(members)), count_(strategy, members_.size()) {
    std::vector<std::string> described;
    std::vector<Capabilities> caps;
    for (const std::shared_ptr<Store>& m : members_) {
      caps.push_back(m->capabilities());
      described.push_back(m->Describe());
    }
    caps_ = CombinedCapabilities(caps);
    describe_ = absl::StrCat("combined(", StrategyName(), ": ",
                             absl::StrJoin(described, ", "), ")");
    // A member whose check may wait on a server: a remote one, asked on a
    // thread of its own. Not a combined member: its members keep their
    // states in the key under their own addresses, which a twin of the key
    // would not carry (it is asked here, and its own members on threads).
    // And a member whose checks are system calls: asked again while the
    // verdict waits for the others.
    for (size_t i = 0; i < members_.size(); ++i) {
      const bool combined = members_[i]->name() == kName;
      may_wait_.push_back(caps[i].scope == Scope::kRemote && !combined);
      quick_.push_back(caps[i].scope != Scope::kRemote && !combined);
    }
  }

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }
  Capabilities capabilities() const override { return caps_; }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode,
                            Deadline deadline) override {
    CombinedKeyState& st = StateOf(key);
    FinishChecks(key);
    const std::vector<bool> before = st.held;
    const LockMode before_mode = st.mode;
    Backoff backoff(kFirstBackoff, kMaxBackoff);
    for (;;) {
      Tally t = TryOnce(key, mode, st);
      KeyWriter(key).set_fence(std::nullopt);  // see the header: no fence is sound here
      if (IsMet(t.succeeded)) {
        st.mode = mode;
        KeyWriter(key).set_previous_owner_died(t.owner_died);
        return true;
      }
      KeyWriter(key).set_previous_owner_died(false);
      GiveBack(key, st, before, before_mode, t.took);
      // Even if every member that refused let go later, the members that
      // failed would keep the strategy from being met: waiting is pointless
      // and reporting contention would hide the failure.
      if (!IsMet(members_.size() - t.failed)) {
        return Restated(t.fault, describe_, key.resource(),
                        NotMet(absl::StrCat("could not take the lock on enough "
                                            "members (",
                                            t.succeeded, " of ", members_.size(),
                                            " took it)"),
                               t));
      }
      if (deadline.has_passed()) return false;
      backoff.Sleep(deadline);
    }
  }

  absl::Status Extend(Key& key, absl::Duration ttl) override {
    FinishChecks(key);
    const std::vector<bool> holders = Holders(key);
    if (CountHeld(holders) == 0) {
      return LostError(describe_, key.resource(),
                       "cannot refresh: this key holds the lock on no member");
    }
    Tally t;
    t.failed = members_.size() - CountHeld(holders);  // they cannot count
    for (size_t i = 0; i < members_.size() && CanBeMet(t.failed); ++i) {
      if (!holders[i]) continue;
      absl::Status s = StoreCalls::Extend(*members_[i], key, ttl);
      if (s.ok()) {
        ++t.succeeded;
      } else {
        t.AddError(s);
      }
    }
    if (IsMet(t.succeeded)) return absl::OkStatus();
    // A lease that only a minority still has is no lock: give it up on every
    // member rather than leave a minority holding it until it runs out.
    Release(key).IgnoreError();
    return LostError(describe_, key.resource(),
                     NotMet(absl::StrCat("the lease was extended on ", t.succeeded,
                                         " of ", members_.size(),
                                         " members only, so the lock was released on all"),
                            t));
  }

  // An async wait on a combined store runs Acquire() on a helper thread, which
  // is wrong for a member whose locks belong to the acquiring thread (shm):
  // refuse rather than leave such a lock owned by a thread that never
  // releases it.
  absl::StatusOr<WaitWord> GetWaitWord(Key& key) override {
    FinishChecks(key);
    for (const std::shared_ptr<Store>& m : members_) {
      absl::StatusOr<WaitWord> w = StoreCalls::GetWaitWord(*m, key);
      if (!w.ok() || w->word != nullptr) {
        return MisuseError(describe_,
                           key.resource(),
                           absl::StrCat("async waits are not supported: member ",
                                        m->Describe(),
                                        " has locks that belong to a thread"));
      }
    }
    return WaitWord{};
  }

  absl::Status Release(Key& key) override {
    absl::Status s = DeleteOnMembers(key, Holders(key));
    TakeState(key);
    return s;
  }

  absl::StatusOr<bool> IsHeld(Key& key) override {
    FinishChecks(key);
    size_t yes = 0;
    size_t no = 0;
    for (const std::shared_ptr<Store>& m : members_) {
      // An error counts as "not held": fail closed.
      absl::StatusOr<bool> held = StoreCalls::IsHeld(*m, key);
      if (held.ok() && *held) {
        ++yes;
      } else {
        ++no;
      }
      if (IsMet(yes)) return true;
      if (!CanBeMet(no)) return false;
    }
    return false;
  }

  // Held while the members that still hold it meet the strategy. Every
  // member this key took is asked (not only until the strategy is met), so
  // that a lost member shows up while the lock is still safe. A member that
  // cannot be asked (its server is down) may still hold its part: the lock
  // is lost (Aborted) only when the members that surely lost it leave the
  // strategy unmet even if every such member still holds; otherwise it is
  // Unavailable, and the watch goes by the lease, as for a single server.
  //
  // One slow member never holds up a loss that the others prove. The
  // members that answer at once (local ones) are asked first; the others,
  // when there is more than one member to ask, each on a thread of its own
  // (combined_member_check.h), all at once. The verdict comes as soon as the
  // answers decide it: a loss that the members still unheard cannot undo
  // is reported while they are asked, and, while it waits for them, the
  // local members are asked again every kRecheck. A check left under way
  // keeps its member's part of the key: the next call on this key waits
  // for it first (FinishChecks()), and a check of the watch that comes then
  // takes its answer.
  absl::Status CheckHeld(Key& key) override {
    const std::vector<bool> holders = Holders(key);
    CombinedKeyState* st = state(key);
    if (st != nullptr) DropOrphans(*st);
    // Without combined state (a deserialized key) every member is asked in
    // turn, as is a single member.
    const bool on_threads = st != nullptr && CountHeld(holders) > 1;
    std::vector<Answer> answers(members_.size(), Answer::kNone);
    std::vector<std::string> why(members_.size());
    auto ask = [&](size_t i) {
      absl::Status s = StoreCalls::CheckHeld(*members_[i], key);
      RecordAnswer(i, s, &answers, &why);
    };
    for (size_t i = 0; i < members_.size(); ++i) {
      if (!holders[i]) continue;
      if (on_threads && may_wait_[i]) {
        answers[i] = Answer::kUnasked;
      } else {
        ask(i);
      }
    }
    if (std::optional<absl::Status> v = Verdict(key, answers, why)) return *v;
    for (size_t i = 0; i < members_.size(); ++i) {
      if (answers[i] != Answer::kUnasked) continue;
      answers[i] = Answer::kPending;
      if (st->checks[i] != nullptr) continue;  // under way since an earlier check
      st->checks[i] = MemberCheck::Start(members_[i], key, st->board);
      if (st->checks[i] == nullptr) ask(i);  // no thread: here, then
    }
    for (Deadline recheck = Deadline::In(kRecheck);;) {
      for (size_t i = 0; i < members_.size(); ++i) {
        if (answers[i] == Answer::kPending && st->checks[i]->done()) {
          RecordAnswer(i, std::exchange(st->checks[i], nullptr)->Finish(key), &answers, &why);
        }
      }
      if (std::optional<absl::Status> v = Verdict(key, answers, why)) return *v;
      if (recheck.has_passed()) {
        for (size_t i = 0; i < members_.size(); ++i) {
          if (answers[i] == Answer::kHeld && quick_[i]) ask(i);
        }
        recheck = Deadline::In(kRecheck);
        continue;
      }
      std::unique_lock<std::mutex> lock(st->board->mu);
      WaitOnCondition(st->board->cv, lock, ForPlatform(recheck), [&] {
        for (size_t i = 0; i < members_.size(); ++i) {
          if (answers[i] == Answer::kPending && st->checks[i]->done()) return true;
        }
        return false;
      });
    }
  }

  WatchTargets GetWatchTargets(Key& key) override {
    FinishChecks(key);
    WatchTargets all;
    for (size_t i = 0; i < members_.size(); ++i) {
      WatchTargets t = StoreCalls::GetWatchTargets(*members_[i], key);
      all.inode_fds.insert(all.inode_fds.end(), t.inode_fds.begin(), t.inode_fds.end());
      all.poll_fds.insert(all.poll_fds.end(), t.poll_fds.begin(), t.poll_fds.end());
      all.checks_wait = all.checks_wait || t.checks_wait ||
                        members_[i]->capabilities().scope == Scope::kRemote;
      all.check_at_least_every = std::min(all.check_at_least_every, t.check_at_least_every);
    }
    return all;
  }

 private:
  absl::string_view StrategyName() const { return count_.StrategyName(); }
  bool IsMet(size_t successes) const { return count_.IsMet(successes); }
  bool CanBeMet(size_t failures) const { return count_.CanBeMet(failures); }

  using Answer = MemberAnswer;

  std::optional<absl::Status> Verdict(const Key& key, const std::vector<Answer>& answers,
                                       const std::vector<std::string>& why) const {
    return CheckVerdict(count_, members_, describe_, key, answers, why);
  }

  // A forked child's copies of checks under way, whose threads stayed with
  // the parent, are left alone (leaked, with their members' parts).
  static void DropOrphans(CombinedKeyState& st) {
    for (std::unique_ptr<MemberCheck>& c : st.checks) {
      if (c != nullptr && c->Orphaned()) c.release();
    }
  }

  // Waits for the member checks under way on `key` and gives their members'
  // parts of it back; their answers are dropped. With `releasing`, a check
  // that has not ended is not waited for: its thread releases its member's
  // part when it does (MemberCheck::LeaveToRelease()). For each member,
  // whether its release was left so.
  std::vector<bool> FinishChecks(Key& key, bool releasing = false) {
    std::vector<bool> left(members_.size(), false);
    CombinedKeyState* st = state(key);
    if (st == nullptr) return left;
    for (size_t i = 0; i < members_.size(); ++i) {
      std::unique_ptr<MemberCheck> check = std::exchange(st->checks[i], nullptr);
      if (check == nullptr) continue;
      if (check->Orphaned()) {
        check.release();  // a forked child's copy: see CombinedKeyState
        continue;
      }
      if (releasing && check->LeaveToRelease()) {
        check.release();  // its thread frees it
        left[i] = true;
        continue;
      }
      check->Finish(key).IgnoreError();
    }
    return left;
  }

  CombinedKeyState& StateOf(Key& key) {
    return EnsureState(key, members_.size());
  }

  // The members that hold the key, as far as this store knows. A key
  // without combined state came from Key::Deserialize (the process that
  // acquired it knew): any member may hold it.
  std::vector<bool> Holders(const Key& key) const {
    const CombinedKeyState* st = state(key);
    return st != nullptr ? st->held : std::vector<bool>(members_.size(), true);
  }

  // Asks each member once, in order, and stops when the strategy can no
  // longer be met. Members that were asked and said yes hold the key now.
  Tally TryOnce(Key& key, LockMode mode, CombinedKeyState& st) {
    Tally t;
    t.took.assign(members_.size(), false);
    for (size_t i = 0; i < members_.size(); ++i) {
      KeyWriter(key).set_previous_owner_died(false);
      absl::StatusOr<bool> saved = StoreCalls::Acquire(*members_[i], key, mode, Deadline::Past());
      if (!saved.ok()) {
        t.AddError(saved.status());
      } else if (*saved) {
        ++t.succeeded;
        t.took[i] = true;
        st.held[i] = true;
        t.owner_died = t.owner_died || key.previous_owner_died();
      } else {
        ++t.refused;
      }
      if (!CanBeMet(t.refused + t.failed)) break;
    }
    return t;
  }

  // Undoes a pass that did not meet the strategy. A key that held nothing
  // before gives back everything it took. A key that held the lock (a
  // failed promotion or demotion) converts back on the members that
  // converted, and keeps the lock only if enough members still have it.
  void GiveBack(Key& key, CombinedKeyState& st, const std::vector<bool>& before,
                LockMode before_mode, const std::vector<bool>& took) {
    if (CountHeld(before) == 0) {
      DeleteOnMembers(key, st.held).IgnoreError();
      st.held.assign(members_.size(), false);
      return;
    }
    for (size_t i = 0; i < members_.size(); ++i) {
      if (!before[i]) {
        if (took[i]) StoreCalls::Release(*members_[i], key).IgnoreError();
        st.held[i] = false;
        continue;
      }
      absl::StatusOr<bool> still =
          took[i] ? StoreCalls::Acquire(*members_[i], key, before_mode, Deadline::Past())
                  : StoreCalls::IsHeld(*members_[i], key);
      st.held[i] = still.ok() && *still;
      // Whatever half-state a failed member is in, it must not linger.
      if (!st.held[i]) StoreCalls::Release(*members_[i], key).IgnoreError();
    }
    st.mode = before_mode;
    if (!IsMet(CountHeld(st.held))) {
      DeleteOnMembers(key, st.held).IgnoreError();
      st.held.assign(members_.size(), false);
    }
  }

  // Releases on every member. The key's combined state stays: Acquire() is
  // still using it. `holders` are the members the key held. A member that
  // finds its part lost (Aborted) makes the release Aborted only if the
  // members that did release still met the strategy no more: until then
  // the lock was held. Other member errors are reported as they are.
  absl::Status DeleteOnMembers(Key& key, const std::vector<bool>& holders) {
    // A member whose check is still under way (a loss was told without
    // its answer) is not waited for: its server is slow or stopped, and the
    // release would wait for the check and then for itself. The check's
    // thread releases its part if its server answers; its lease or session
    // ends it otherwise.
    const std::vector<bool> left = FinishChecks(key, /*releasing=*/true);
    std::vector<std::string> errors;
    std::vector<std::string> lost;
    absl::Status first_error;
    size_t released = 0;
    for (size_t i = 0; i < members_.size(); ++i) {
      absl::Status s =
          left[i] ? TransientError(members_[i]->Describe(),
                                   key.resource(),
                                   "its server has not answered the check under way: released "
                                   "once it answers, else its lease or session ends its part")
                  : StoreCalls::Release(*members_[i], key);
      if (s.ok()) {
        if (holders[i]) ++released;
      } else if (absl::IsAborted(s)) {
        lost.push_back(std::string(s.message()));
      } else {
        if (first_error.ok()) first_error = s;
        errors.push_back(std::string(s.message()));
      }
    }
    if (!lost.empty() && !IsMet(released + errors.size())) {
      std::vector<std::string> all = lost;
      all.insert(all.end(), errors.begin(), errors.end());
      return LostError(describe_, key.resource(),
                       absl::StrCat("the lock was no longer held at release: the ",
                                    StrategyName(), " of members was not met (",
                                    released, " of ", members_.size(),
                                    " released it): ", absl::StrJoin(all, "; ")));
    }
    if (errors.empty()) return absl::OkStatus();
    return Restated(first_error, describe_, key.resource(),
                    absl::StrCat("release failed on ", errors.size(), " of ",
                                   members_.size(), " members: ",
                                   absl::StrJoin(errors, "; ")));
  }

  // "<strategy> not met: <what>; member errors: ...".
  std::string NotMet(absl::string_view what, const Tally& t) const {
    std::string message = absl::StrCat(StrategyName(), " not met: ", what);
    if (!t.errors.empty()) {
      absl::StrAppend(&message, "; member errors: ", absl::StrJoin(t.errors, "; "));
    }
    return message;
  }

  const std::vector<std::shared_ptr<Store>> members_;
  const CombineCount count_;
  Capabilities caps_;
  std::string describe_;
  // By member index: whether it is asked on a thread of its own (its
  // checks may wait on a server), and whether it answers at once.
  std::vector<bool> may_wait_;
  std::vector<bool> quick_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewCombinedStore(
    std::vector<std::shared_ptr<Store>> members, CombineStrategy strategy) {
  if (members.empty()) {
    return ConfigurationError("ipclock: a combined store needs members");
  }
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] == nullptr) {
      return ConfigurationError(
          absl::StrCat("ipclock: combined store member ", i + 1, " is null"));
    }
    for (size_t j = 0; j < i; ++j) {
      // One store object twice would share one per-key state slot.
      if (members[j] == members[i]) {
        return ConfigurationError(absl::StrCat(
            "ipclock: combined store members ", j + 1, " and ", i + 1,
            " are the same store (", members[i]->Describe(), ")"));
      }
    }
  }
  return std::shared_ptr<Store>(
      std::make_shared<CombinedStore>(std::move(members), strategy));
}

}  // namespace ipclock
