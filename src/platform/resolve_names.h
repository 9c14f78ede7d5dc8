// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Host names resolved with a deadline, for a client library that resolves
// them itself one after another without one (the ZooKeeper client: a list
// of names that do not resolve keeps it in getaddrinfo() for as long as
// the resolver takes for each, whatever the caller's timeout).

#ifndef IPCLOCK_PLATFORM_RESOLVE_NAMES_H_
#define IPCLOCK_PLATFORM_RESOLVE_NAMES_H_

#include <string>
#include <vector>

#include "platform/monotonic_deadline.h"

namespace ipclock {

struct ResolvedName {
  // The numeric addresses of the name for TCP (IPv6 ones without
  // brackets), in the resolver's order, duplicates left out; empty when it
  // did not resolve.
  std::vector<std::string> addresses;
  // Why it did not resolve ("Name or service not known", "no answer
  // within the time given"); empty when it did.
  std::string error;
};

// Resolves `names` (host names, or IP addresses, which are taken as they
// are) at once, on up to 16 threads of its own (getaddrinfo()), and gives
// up on those without an answer at `deadline`. One result per name, in
// order. A lookup given up on goes on in the background until the
// resolver ends it; its thread then ends without taking another name.
// Where no thread can be started, the names are resolved one after another
// on the caller's, without the deadline.
std::vector<ResolvedName> ResolveNames(const std::vector<std::string>& names,
                                       MonotonicDeadline deadline);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_RESOLVE_NAMES_H_
