// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A combined store built from its DSN: each member by StoreFromDsn(), and a
// member whose server is down at start kept as a LazyMember that is built
// on use.

#include "registry/combined_dsn.h"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/options_driver.h"
#include "ipclock/errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/errors.h"
#include "registry/store_registry.h"
#include "stores/combined/combined_store.h"

namespace ipclock {
namespace {

// A member whose server was down when the combined store was built. It
// fails every call (which the strategy counts as a refusal) until building
// it again succeeds; it tries at most once a second, and never makes a
// caller wait for another caller's attempt.
class LazyMember final : public StoreInterface {
 public:
  LazyMember(Dsn dsn, std::string shown, const StoreOptions& options,
             Capabilities assumed, absl::Status first_error)
      : dsn_(std::move(dsn)),
        shown_(std::move(shown)),
        options_(options),
        assumed_(assumed),
        last_error_(std::move(first_error)),
        next_try_nanos_(Deadline::NowNanos() + kRetryNanos) {}

  absl::string_view name() const override { return "unbuilt"; }
  std::string Describe() const override { return shown_; }
  // The capabilities its DSN gives it (CheckDsn()): the combined store's
  // are fixed when it is built.
  Capabilities capabilities() const override { return assumed_; }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override {
    absl::StatusOr<std::shared_ptr<Store>> store = Get();
    if (!store.ok()) return store.status();
    return StoreCalls::Acquire(**store, key, mode, deadline);
  }
  absl::Status Extend(Key& key, absl::Duration ttl) override {
    absl::StatusOr<std::shared_ptr<Store>> store = Get();
    if (!store.ok()) return store.status();
    return StoreCalls::Extend(**store, key, ttl);
  }
  absl::Status Release(Key& key) override {
    std::shared_ptr<Store> store = Built();
    // Never built: it never held anything.
    return store == nullptr ? absl::OkStatus() : StoreCalls::Release(*store, key);
  }
  absl::StatusOr<bool> IsHeld(Key& key) override {
    std::shared_ptr<Store> store = Built();
    if (store == nullptr) return false;
    return StoreCalls::IsHeld(*store, key);
  }
  absl::Status CheckHeld(Key& key) override {
    std::shared_ptr<Store> store = Built();
    if (store == nullptr) {
      return absl::AbortedError(absl::StrCat(shown_, ": never built, holds nothing"));
    }
    return StoreCalls::CheckHeld(*store, key);
  }
  WatchTargets GetWatchTargets(Key& key) override {
    std::shared_ptr<Store> store = Built();
    return store == nullptr ? WatchTargets() : StoreCalls::GetWatchTargets(*store, key);
  }

 private:
  static constexpr int64_t kRetryNanos = 1000 * 1000 * 1000;

  std::shared_ptr<Store> Built() {
    std::lock_guard<std::mutex> guard(mu_);
    return store_;
  }

  absl::StatusOr<std::shared_ptr<Store>> Get() {
    {
      std::lock_guard<std::mutex> guard(mu_);
      if (store_ != nullptr) return store_;
      if (building_ || Deadline::NowNanos() < next_try_nanos_) return last_error_;
      building_ = true;
    }
    // Outside the mutex: connecting may take a server's connect timeout.
    // Each attempt takes the options from a fresh copy of the parsed DSN.
    Dsn dsn = dsn_;
    absl::StatusOr<std::shared_ptr<Store>> built = BuildStore(dsn, options_);
    std::lock_guard<std::mutex> guard(mu_);
    building_ = false;
    if (built.ok()) {
      store_ = *built;
      return store_;
    }
    last_error_ = built.status();
    next_try_nanos_ = Deadline::NowNanos() + kRetryNanos;
    return last_error_;
  }

  const Dsn dsn_;  // may hold a password: never shown
  const std::string shown_;
  const StoreOptions options_;
  const Capabilities assumed_;
  std::mutex mu_;
  std::shared_ptr<Store> store_;  // guarded by mu_
  absl::Status last_error_;       // guarded by mu_
  int64_t next_try_nanos_;        // guarded by mu_
  bool building_ = false;         // guarded by mu_
};

}  // namespace

namespace {

absl::Status MemberFailed(int n, const absl::Status& s) {
  return InContext(absl::StrCat("combined store, member store", n), s);
}

// The members' DSNs, each parsed once (a member's DSN is an option's value).
struct CombinedOptions {
  CombineStrategy strategy = CombineStrategy::kConsensus;
  std::vector<Dsn> members;
};

// Messages never repeat the DSN: it holds the member DSNs, and the DSN
// parser redacts only the first password in a string.
absl::StatusOr<CombinedOptions> CombinedOptionsFromDsn(Dsn& dsn) {
  if ((dsn.has_authority() && !dsn.host().empty()) || !dsn.path().empty()) {
    return absl::InvalidArgumentError(
        "ipclock: bad combined DSN: it takes no address; members go in "
        "store1=DSN&store2=DSN...");
  }
  CombinedOptions out;
  if (std::optional<std::string> s = dsn.TakeOption("strategy")) {
    if (*s == "consensus") {
      out.strategy = CombineStrategy::kConsensus;
    } else if (*s == "unanimous") {
      out.strategy = CombineStrategy::kUnanimous;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("ipclock: bad combined DSN: option strategy=", *s,
                       ": expected consensus or unanimous"));
    }
  }
  for (int n = 1;; ++n) {
    std::optional<std::string> member = dsn.TakeOption(absl::StrCat("store", n));
    if (!member) break;
    absl::StatusOr<Dsn> parsed = Dsn::Parse(*member);
    if (!parsed.ok()) return MemberFailed(n, parsed.status());
    out.members.push_back(*std::move(parsed));
  }
  if (std::optional<std::string> unknown = dsn.FirstUnusedOption()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: bad combined DSN: unknown option '", absl::CHexEscape(*unknown),
        "' (options are strategy and store1, store2, ... numbered from 1 without gaps; ",
        out.members.size(), " members read)"));
  }
  if (out.members.empty()) {
    return absl::InvalidArgumentError(
        "ipclock: bad combined DSN: no members (store1=DSN&store2=DSN...)");
  }
  return out;
}

// A member's DSN check: its own needs are none (the combined store's are
// checked against the combined capabilities).
absl::StatusOr<Capabilities> CheckMember(const Dsn& member, const StoreOptions& options) {
  StoreOptions plain;
  plain.remove_ipc = options.remove_ipc;
  Dsn copy = member;
  return CheckStore(copy, plain);
}

absl::StatusOr<Capabilities> CheckCombinedDsn(Dsn& dsn, const StoreOptions& options) {
  absl::StatusOr<CombinedOptions> combined = CombinedOptionsFromDsn(dsn);
  if (!combined.ok()) return combined.status();
  std::vector<Capabilities> caps;
  for (size_t i = 0; i < combined->members.size(); ++i) {
    absl::StatusOr<Capabilities> c = CheckMember(combined->members[i], options);
    if (!c.ok()) return MemberFailed(static_cast<int>(i + 1), c.status());
    caps.push_back(*c);
  }
  return CombinedCapabilities(caps);
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> CombinedStoreFromDsn(
    Dsn& dsn, const StoreOptions& options) {
  absl::StatusOr<CombinedOptions> combined = CombinedOptionsFromDsn(dsn);
  if (!combined.ok()) return combined.status();
  const CombineStrategy strategy = combined->strategy;
  // Members whose server is down now (Unavailable) are retried on use, as
  // long as the members that could be built meet the strategy without them:
  // a majority of three Redis servers must not depend on all three being up
  // at start. Any other error is a mistake in the DSN and is returned.
  struct Unbuilt {
    size_t index;
    int n;
    Dsn dsn;  // as parsed, no option taken
    absl::Status error;
  };
  std::vector<std::shared_ptr<Store>> members;
  std::vector<Unbuilt> unbuilt;
  for (size_t i = 0; i < combined->members.size(); ++i) {
    const int n = static_cast<int>(i + 1);
    Dsn used = combined->members[i];
    absl::StatusOr<std::shared_ptr<Store>> store = BuildStore(used, options);
    if (store.ok()) {
      members.push_back(*std::move(store));
      continue;
    }
    absl::Status error = MemberFailed(n, store.status());
    if (!IsTransient(error)) return error;
    unbuilt.push_back({members.size(), n, std::move(combined->members[i]), error});
    members.push_back(nullptr);
  }
  const size_t built = members.size() - unbuilt.size();
  const bool enough = strategy == CombineStrategy::kUnanimous
                          ? unbuilt.empty()
                          : 2 * built > members.size();
  if (!enough) return unbuilt.front().error;
  for (Unbuilt& u : unbuilt) {
    // The capabilities it will have once built, as its DSN gives them.
    absl::StatusOr<Capabilities> caps = CheckMember(u.dsn, options);
    if (!caps.ok()) return MemberFailed(u.n, caps.status());
    std::string shown = absl::StrCat(u.dsn.redacted(), " (down at start)");
    members[u.index] = std::make_shared<LazyMember>(std::move(u.dsn), std::move(shown),
                                                    options, *caps, u.error);
  }
  return NewCombinedStore(std::move(members), strategy);
}

const StoreDriver kCombinedDriver = {
    &PrepareByCheckThenBuild<&CheckCombinedDsn, &CombinedStoreFromDsn>, nullptr};

}  // namespace ipclock
