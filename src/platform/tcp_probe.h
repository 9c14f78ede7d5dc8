// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Whether anything listens at a TCP address, for a client library that
// will not say: one that retries a refused connection quietly until its
// own timeout runs out (the ZooKeeper client's I/O thread).

#ifndef IPCLOCK_PLATFORM_TCP_PROBE_H_
#define IPCLOCK_PLATFORM_TCP_PROBE_H_

namespace ipclock {

// Whether every address `host` resolves to refuses a TCP connection to
// `port` now: the peer's kernel answered each connect(2) with a reset
// (ECONNREFUSED: nothing listens there), within `timeout_ms` each. False
// when an address accepted (the connection is closed at once, so the
// server sees a connection that sent nothing), did not answer in time, or
// failed in another way, and when `host` does not resolve: only a refusal
// is certain. `host` is a name or an IP address, without brackets.
bool EveryAddressRefuses(const char* host, int port, int timeout_ms);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_TCP_PROBE_H_
