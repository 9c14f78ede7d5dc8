// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "registry/degraded_store.h"

#include <stdio.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/diagnostics.h"
#include "registry/store_registry.h"
#include "platform/errors.h"
#include "ipclock/spi/store_interface.h"

namespace ipclock {
namespace {

enum class DegradedPolicy { kRaise, kWarn, kWarnThrottled, kProceed };

constexpr int64_t kThrottleNanos = int64_t{60} * 1000 * 1000 * 1000;

// The fallback store, wrapped so that every message names it as the
// fallback and acquisitions are reported as the policy says. Everything else
// is the fallback's own behaviour: its capabilities, its per-key state (kept
// under the fallback's address, so a Key never sees this wrapper's).
class DegradedStore final : public StoreInterface {
 public:
  DegradedStore(std::shared_ptr<Store> fallback, std::string remote,
                absl::Status why, DegradedPolicy policy)
      : fallback_(std::move(fallback)),
        policy_(policy),
        describe_(absl::StrCat(fallback_->Describe(), " (fallback for ",
                               remote, ")")),
        why_(absl::StrCat(remote, " was not usable when the store was built (",
                          absl::StatusCodeToString(why.code()), ": ",
                          why.message(), ")")) {}

  absl::string_view name() const override { return fallback_->name(); }
  std::string Describe() const override { return describe_; }
  Capabilities capabilities() const override { return fallback_->capabilities(); }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode,
                            Deadline deadline) override {
    Report(key);
    return StoreCalls::Acquire(*fallback_, key, mode, deadline);
  }
  absl::Status Extend(Key& key, absl::Duration ttl) override {
    return StoreCalls::Extend(*fallback_, key, ttl);
  }
  absl::Status Release(Key& key) override { return StoreCalls::Release(*fallback_, key); }
  absl::StatusOr<bool> IsHeld(Key& key) override { return StoreCalls::IsHeld(*fallback_, key); }
  absl::StatusOr<WaitWord> GetWaitWord(Key& key) override {
    return StoreCalls::GetWaitWord(*fallback_, key);
  }
  absl::Status CheckHeld(Key& key) override {
    return StoreCalls::CheckHeld(*fallback_, key);
  }
  WatchTargets GetWatchTargets(Key& key) override {
    return StoreCalls::GetWatchTargets(*fallback_, key);
  }

 private:
  // A use is an acquisition attempt: refreshes and releases belong to a lock
  // whose acquisition was already reported.
  void Report(const Key& key) {
    if (policy_ == DegradedPolicy::kProceed) return;
    if (policy_ == DegradedPolicy::kWarnThrottled) {
      const int64_t now = Deadline::NowNanos();
      int64_t last = last_warning_.load(std::memory_order_relaxed);
      if (last != 0 && now - last < kThrottleNanos) return;
      // One thread wins the minute; the others stay quiet.
      if (!last_warning_.compare_exchange_strong(last, now)) return;
    }
    std::string line = absl::StrCat(
        "ipclock: warning: resource ", QuoteResource(key.resource()),
        " is locked on the fallback store ", fallback_->Describe(), ": ", why_,
        "; the fallback does not exclude processes on other hosts");
    EmitNotice(DiagnosticSeverity::kWarning, line, this);
  }

  const std::shared_ptr<Store> fallback_;
  const DegradedPolicy policy_;
  const std::string describe_;
  const std::string why_;
  std::atomic<int64_t> last_warning_{0};
};

absl::StatusOr<DegradedPolicy> ParsePolicy(const Dsn& dsn,
                                           const std::optional<std::string>& v) {
  if (!v || *v == "raise") return DegradedPolicy::kRaise;
  if (*v == "warn") return DegradedPolicy::kWarn;
  if (*v == "warn_throttled") return DegradedPolicy::kWarnThrottled;
  if (*v == "proceed") return DegradedPolicy::kProceed;
  return BadDsn(dsn, absl::StrCat("option degraded=", *v,
                                  ": expected raise, warn, warn_throttled or proceed"));
}

}  // namespace

namespace {

struct DegradedOptions {
  Dsn fallback;
  DegradedPolicy policy;
};

// Takes `fallback` and `degraded` from `dsn`. The fallback option's value
// is a DSN of its own, parsed here once.
absl::StatusOr<DegradedOptions> TakeDegradedOptions(Dsn& dsn) {
  std::optional<std::string> fallback = dsn.TakeOption("fallback");
  absl::StatusOr<DegradedPolicy> policy = ParsePolicy(dsn, dsn.TakeOption("degraded"));
  if (!policy.ok()) return policy.status();
  if (!fallback || fallback->empty()) {
    return BadDsn(dsn, "degraded= needs fallback=DSN (a percent-encoded local store)");
  }
  absl::StatusOr<Dsn> fallback_dsn = Dsn::Parse(*fallback);
  if (!fallback_dsn.ok()) {
    return InContext("fallback", fallback_dsn.status());
  }
  if (WantsDegradedMode(*fallback_dsn)) {
    return BadDsn(dsn, "a fallback cannot have a fallback of its own");
  }
  return DegradedOptions{*std::move(fallback_dsn), *policy};
}

absl::Status RemoteFallback(const Dsn& dsn, absl::string_view fallback) {
  return BadDsn(dsn, absl::StrCat("the fallback ", fallback, " is a remote store; use a "
                                  "combined store to spread a lock over servers"));
}

}  // namespace

absl::StatusOr<Capabilities> CheckDegradedDsn(Dsn& dsn, const StoreOptions& options) {
  absl::StatusOr<DegradedOptions> degraded = TakeDegradedOptions(dsn);
  if (!degraded.ok()) return degraded.status();
  // The fallback first, so that a typo in it shows up on the day the server
  // is up, not the day it is down.
  absl::StatusOr<Capabilities> local = CheckStoreWithoutFallback(degraded->fallback, options);
  if (!local.ok()) {
    return InContext("fallback", local.status());
  }
  if (local->scope == Scope::kRemote) return RemoteFallback(dsn, degraded->fallback.redacted());
  absl::StatusOr<Capabilities> remote = CheckStoreWithoutFallback(dsn, options);
  // A remote store this build left out is what the fallback is for.
  if (absl::IsUnimplemented(remote.status())) return local;
  if (!remote.ok()) return remote;
  // What a program can count on, whichever of the two it gets.
  Capabilities c = *remote;
  c.blocking = c.blocking && local->blocking;
  c.expiring = c.expiring && local->expiring;
  c.shared = c.shared && local->shared;
  c.serializable = c.serializable && local->serializable;
  c.fencing = c.fencing && local->fencing;
  c.owner_death = c.owner_death && local->owner_death;
  c.counting = c.counting && local->counting;
  if (local->expiring) c.max_lease = std::min(c.max_lease, local->max_lease);
  return c;
}

absl::StatusOr<std::shared_ptr<Store>> DegradedStoreFromDsn(Dsn& dsn,
                                                            const StoreOptions& options) {
  absl::StatusOr<DegradedOptions> degraded = TakeDegradedOptions(dsn);
  if (!degraded.ok()) return degraded.status();
  const DegradedPolicy* policy = &degraded->policy;
  Dsn* fallback_dsn = &degraded->fallback;

  absl::StatusOr<std::shared_ptr<Store>> remote = BuildStoreWithoutFallback(dsn, options);
  if (remote.ok() || *policy == DegradedPolicy::kRaise) return remote;
  const absl::StatusCode code = remote.status().code();
  if (code != absl::StatusCode::kUnavailable &&
      code != absl::StatusCode::kUnimplemented) {
    return remote;
  }
  absl::StatusOr<std::shared_ptr<Store>> local =
      BuildStoreWithoutFallback(*fallback_dsn, options);
  if (!local.ok()) {
    return absl::Status(code, absl::StrCat(remote.status().message(),
                                           "; its fallback failed too: ",
                                           local.status().message()));
  }
  if ((*local)->capabilities().scope == Scope::kRemote) {
    return RemoteFallback(dsn, (*local)->Describe());
  }
  return std::shared_ptr<Store>(std::make_shared<DegradedStore>(
      *std::move(local), dsn.RedactedWithout({"fallback", "degraded", "metrics"}), remote.status(),
      *policy));
}

}  // namespace ipclock
