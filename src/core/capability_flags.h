// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A store's capabilities (ipclock/store.h) written in one line: its scope
// and the capabilities it has, or'd together, each one a store has only
// under some option behind `When()`:
//
//   return MakeCapabilities(kFlockEntry.scope,
//                           kCanBlock | kCanShare | When(options.fair, kIsFair));
//
// Every capability not named is false, as in a default Capabilities, so a
// store's line lists what it can do and nothing else. Constexpr: a store's
// capabilities() costs what filling the struct by hand did.

#ifndef IPCLOCK_CORE_CAPABILITY_FLAGS_H_
#define IPCLOCK_CORE_CAPABILITY_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "ipclock/store.h"

namespace ipclock {

// One bit per boolean of Capabilities, named after it.
using CapabilityFlags = uint32_t;
inline constexpr CapabilityFlags kCanBlock = 1u << 0;          // blocking
inline constexpr CapabilityFlags kCanExpire = 1u << 1;         // expiring
inline constexpr CapabilityFlags kCanShare = 1u << 2;          // shared
inline constexpr CapabilityFlags kCanSerialize = 1u << 3;      // serializable
inline constexpr CapabilityFlags kCanFence = 1u << 4;          // fencing
inline constexpr CapabilityFlags kSeesOwnerDeath = 1u << 5;    // owner_death
inline constexpr CapabilityFlags kCanCount = 1u << 6;          // counting
inline constexpr CapabilityFlags kIsFair = 1u << 7;            // fair
inline constexpr CapabilityFlags kInheritsPriority = 1u << 8;  // priority_inheritance
inline constexpr CapabilityFlags kCanCancel = 1u << 9;         // cancellable
inline constexpr CapabilityFlags kCanWeigh = 1u << 10;         // weighted

// `flags` when `on`, else none.
constexpr CapabilityFlags When(bool on, CapabilityFlags flags) { return on ? flags : 0; }

// The capabilities of a store of `scope` that has `flags` and keeps leases
// of up to `max_lease` (meaningful only with kCanExpire).
constexpr Capabilities MakeCapabilities(
    Scope scope, CapabilityFlags flags,
    absl::Duration max_lease = absl::InfiniteDuration()) {
  Capabilities c;
  c.blocking = (flags & kCanBlock) != 0;
  c.expiring = (flags & kCanExpire) != 0;
  c.shared = (flags & kCanShare) != 0;
  c.serializable = (flags & kCanSerialize) != 0;
  c.fencing = (flags & kCanFence) != 0;
  c.owner_death = (flags & kSeesOwnerDeath) != 0;
  c.counting = (flags & kCanCount) != 0;
  c.fair = (flags & kIsFair) != 0;
  c.priority_inheritance = (flags & kInheritsPriority) != 0;
  c.cancellable = (flags & kCanCancel) != 0;
  c.weighted = (flags & kCanWeigh) != 0;
  c.scope = scope;
  c.max_lease = max_lease;
  return c;
}

// Why `weight` permits of `permits` cannot be taken on a store with `caps`,
// or "" if they can: a weight of 0, more than the permits, or more than 1
// on a store without the `weighted` capability.
std::string WeightProblem(uint32_t permits, uint32_t weight, const Capabilities& caps);

}  // namespace ipclock

#endif  // IPCLOCK_CORE_CAPABILITY_FLAGS_H_
