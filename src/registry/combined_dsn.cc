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

#include "absl/strings/str_cat.h"
#include "ipclock/spi/store_interface.h"
#include "registry/store_registry.h"

namespace ipclock {
namespace {

// A member whose server was down when the combined store was built. It
// fails every call (which the strategy counts as a refusal) until building
// it again succeeds; it tries at most once a second, and never makes a
// caller wait for another caller's attempt.
class LazyMember final : public Store {
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
  // The caps of a sibling member of the same kind: the combined store's
  // caps are fixed when it is built.
  Capabilities capabilities() const override { return assumed_; }

  absl::StatusOr<bool> Save(Key& key, LockMode mode, Deadline deadline) override {
    absl::StatusOr<std::shared_ptr<Store>> store = Get();
    if (!store.ok()) return store.status();
    return StoreCalls::Save(**store, key, mode, deadline);
  }
  absl::Status PutOffExpiration(Key& key, absl::Duration ttl) override {
    absl::StatusOr<std::shared_ptr<Store>> store = Get();
    if (!store.ok()) return store.status();
    return StoreCalls::PutOffExpiration(**store, key, ttl);
  }
  absl::Status Delete(Key& key) override {
    std::shared_ptr<Store> store = Built();
    // Never built: it never held anything.
    return store == nullptr ? absl::OkStatus() : StoreCalls::Delete(*store, key);
  }
  absl::StatusOr<bool> Exists(Key& key) override {
    std::shared_ptr<Store> store = Built();
    if (store == nullptr) return false;
    return StoreCalls::Exists(*store, key);
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

absl::StatusOr<std::shared_ptr<Store>> CombinedStoreFromDsn(
    Dsn& dsn, const StoreOptions& options) {
  // Messages below never repeat the DSN: it holds the member DSNs, and the
  // DSN parser redacts only the first password in a string.
  if ((dsn.has_authority() && !dsn.host().empty()) || !dsn.path().empty()) {
    return absl::InvalidArgumentError(
        "ipclock: bad combined DSN: it takes no address; members go in "
        "store1=DSN&store2=DSN...");
  }
  CombineStrategy strategy = CombineStrategy::kConsensus;
  if (std::optional<std::string> s = dsn.TakeOption("strategy")) {
    if (*s == "consensus") {
      strategy = CombineStrategy::kConsensus;
    } else if (*s == "unanimous") {
      strategy = CombineStrategy::kUnanimous;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("ipclock: bad combined DSN: strategy=", *s,
                       ": expected consensus or unanimous"));
    }
  }
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
  for (int n = 1;; ++n) {
    std::optional<std::string> member = dsn.TakeOption(absl::StrCat("store", n));
    if (!member) break;
    auto failed = [n](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat("ipclock: combined store, member store", n,
                                                 ": ", s.message()));
    };
    // The option's value is the member's DSN, parsed here once.
    absl::StatusOr<Dsn> parsed = Dsn::Parse(*member);
    if (!parsed.ok()) return failed(parsed.status());
    Dsn used = *parsed;
    absl::StatusOr<std::shared_ptr<Store>> store = BuildStore(used, options);
    if (store.ok()) {
      members.push_back(*std::move(store));
      continue;
    }
    absl::Status error = failed(store.status());
    if (!absl::IsUnavailable(error)) return error;
    unbuilt.push_back({members.size(), n, *std::move(parsed), error});
    members.push_back(nullptr);
  }
  if (!dsn.CheckAllOptionsUsed().ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: bad combined DSN: options are strategy and store1, store2, "
        "... numbered from 1 without gaps (",
        members.size(), " members read)"));
  }
  if (members.empty()) {
    return absl::InvalidArgumentError(
        "ipclock: bad combined DSN: no members (store1=DSN&store2=DSN...)");
  }
  const size_t built = members.size() - unbuilt.size();
  const bool enough = strategy == CombineStrategy::kUnanimous
                          ? unbuilt.empty()
                          : 2 * built > members.size();
  if (!enough) return unbuilt.front().error;
  for (Unbuilt& u : unbuilt) {
    const Store* sibling = nullptr;
    for (const std::shared_ptr<Store>& m : members) {
      if (m != nullptr && m->name() == u.dsn.scheme()) sibling = m.get();
    }
    // Without a built member of the same kind, its capabilities are unknown.
    if (sibling == nullptr) return u.error;
    std::string shown = absl::StrCat(u.dsn.redacted(), " (down at start)");
    members[u.index] = std::make_shared<LazyMember>(std::move(u.dsn), std::move(shown),
                                                    options, sibling->capabilities(), u.error);
  }
  return NewCombinedStore(std::move(members), strategy);
}

const StoreDriver kCombinedDriver = {&CombinedStoreFromDsn, nullptr};

}  // namespace ipclock
