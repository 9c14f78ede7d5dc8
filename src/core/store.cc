// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/store.h"

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/capability_flags.h"
#include "platform/errors.h"
#include "ipclock/spi/store_interface.h"

namespace ipclock {

namespace {

// "2591999 s (30 days)": leases are given in seconds.
std::string LeaseText(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "without end";
  std::string text = absl::StrFormat("%.15g s", absl::ToDoubleSeconds(d));
  if (d >= absl::Hours(24)) {
    absl::StrAppend(&text, " (", std::llround(absl::ToDoubleHours(d) / 24), " days)");
  }
  return text;
}

}  // namespace

absl::Status CheckLeaseFits(const Capabilities& caps, absl::Duration ttl) {
  if (!caps.expiring || ttl <= caps.max_lease) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("a lease (LockOptions::ttl, --ttl) of ", LeaseText(ttl), ": expected at most ",
                   LeaseText(caps.max_lease), ", the longest this store keeps"));
}

Store::~Store() = default;

void Store::SetDiagnosticSink(DiagnosticSink sink) {
  std::shared_ptr<const DiagnosticSink> fresh;
  if (sink) fresh = std::make_shared<const DiagnosticSink>(std::move(sink));
  std::atomic_store(&diagnostic_sink_, std::move(fresh));
}

DiagnosticSink Store::diagnostic_sink() const {
  std::shared_ptr<const DiagnosticSink> sink = std::atomic_load(&diagnostic_sink_);
  return sink ? *sink : DiagnosticSink();
}

void StoreInterface::SetStateSlot(Key& key, std::unique_ptr<KeyState> state) const {
  key.set_state(this, std::move(state));
}

std::unique_ptr<KeyState> StoreInterface::TakeStateSlot(Key& key) const {
  return key.take_state(this);
}

absl::Status StoreInterface::Extend(Key&, absl::Duration) {
  return absl::OkStatus();
}

absl::Status StoreInterface::CheckHeld(Key& key) {
  absl::StatusOr<bool> held = IsHeld(key);
  if (!held.ok()) return held.status();
  if (*held) return absl::OkStatus();
  return StoreError(absl::StatusCode::kAborted, Describe(), key.resource(),
                    "the lock is no longer held");
}

absl::Status StoreInterface::ReleaseAsDead(Key& key) { return Release(key); }

WatchTargets StoreInterface::GetWatchTargets(Key&) { return WatchTargets(); }

absl::StatusOr<WaitWord> StoreInterface::GetWaitWord(Key&) { return WaitWord(); }
std::shared_ptr<Store> StoreInterface::NativeSemaphores() { return nullptr; }

std::string WeightProblem(uint32_t permits, uint32_t weight, const Capabilities& caps) {
  if (weight == 0) return "weight must be at least 1";
  if (weight > permits) {
    return absl::StrCat("weight=", weight, " is more than the limit (permits=", permits, ")");
  }
  if (weight != 1 && !caps.weighted) {
    return absl::StrCat("weight=", weight,
                        " needs a store whose count takes weights (semaphore, in-memory) "
                        "or a semaphore of slot locks (stores/slot_semaphore_store.h)");
  }
  return "";
}

absl::StatusOr<bool> StoreCalls::Acquire(Store& store, const Capabilities& caps,
                                      Key& key, LockMode mode, Deadline deadline) {
  // A store asked for what it cannot do: a configuration fault
  // (ipclock/errors.h), as `ipclock run -s` finds it from the DSN.
  if (mode == LockMode::kShared && !caps.shared) {
    return StoreError(absl::StatusCode::kInvalidArgument, store.Describe(),
                      key.resource(), "this store has no shared locks");
  }
  if (key.permits() != 1 && !caps.counting) {
    return StoreError(absl::StatusCode::kInvalidArgument, store.Describe(),
                      key.resource(),
                      absl::StrCat("permits=", key.permits(),
                                   " needs a counting store (semaphore, "
                                   "posix-semaphore, in-memory)"));
  }
  if (key.weight() == 0 || key.weight() > key.permits() ||
      (key.weight() != 1 && !caps.weighted)) {
    return StoreError(absl::StatusCode::kInvalidArgument, store.Describe(),
                      key.resource(), WeightProblem(key.permits(), key.weight(), caps));
  }
  absl::StatusOr<bool> saved = Ops(store).Acquire(key, mode, deadline);
  if (ABSL_PREDICT_TRUE(saved.ok())) return saved;
  return AsAcquireError(saved.status());
}

absl::Status StoreCalls::AsAcquireError(absl::Status error) {
  // DeadlineExceeded is reserved for a lock that stayed busy: a store whose
  // server or call timed out is unavailable, not contended.
  if (error.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::UnavailableError(error.message());
  }
  return error;
}

absl::Status StoreCalls::Extend(Store& store, Key& key,
                                          absl::Duration ttl) {
  if (!store.capabilities().expiring) return absl::OkStatus();
  if (ttl <= absl::ZeroDuration() || ttl == absl::InfiniteDuration()) {
    return StoreError(absl::StatusCode::kInvalidArgument, store.Describe(),
                      key.resource(),
                      absl::StrCat("a lease must be positive and finite, not ",
                                   absl::FormatDuration(ttl)));
  }
  return Ops(store).Extend(key, ttl);
}

absl::StatusOr<bool> StoreCalls::IsHeld(Store& store, Key& key) {
  return Ops(store).IsHeld(key);
}

absl::Status StoreCalls::CheckHeld(Store& store, Key& key) {
  return Ops(store).CheckHeld(key);
}

WatchTargets StoreCalls::GetWatchTargets(Store& store, Key& key) {
  return Ops(store).GetWatchTargets(key);
}

absl::StatusOr<WaitWord> StoreCalls::GetWaitWord(Store& store, Key& key) {
  return Ops(store).GetWaitWord(key);
}

std::string CapabilitiesToString(const Capabilities& c) {
  std::vector<absl::string_view> parts;
  parts.push_back(c.scope == Scope::kProcess ? "process"
                 : c.scope == Scope::kLocal ? "local"
                                            : "remote");
  if (c.blocking) parts.push_back("blocking");
  if (c.expiring) parts.push_back("expiring");
  if (c.shared) parts.push_back("shared");
  if (c.serializable) parts.push_back("serializable");
  if (c.fencing) parts.push_back("fencing");
  if (c.owner_death) parts.push_back("owner-death");
  if (c.counting) parts.push_back("counting");
  if (c.fair) parts.push_back("fair");
  if (c.priority_inheritance) parts.push_back("priority-inheritance");
  if (c.cancellable) parts.push_back("cancellable");
  if (c.weighted) parts.push_back("weighted");
  return absl::StrJoin(parts, ",");
}

}  // namespace ipclock
