// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The floors of the remote stores: one round trip to the server, made with
// the same client library the store uses. Each returns the median ns per
// round trip, or < 0 (with `*why` set) when the client is not built in or
// the server cannot be reached.

#ifndef IPCLOCK_TOOLS_BENCH_REMOTE_PEERS_H_
#define IPCLOCK_TOOLS_BENCH_REMOTE_PEERS_H_

#include <string>

#include "measure.h"

namespace ipclock_bench {

// PING through hiredis to the server of a redis:// DSN.
double RedisPing(const RunShape& shape, const std::string& dsn, std::string* why);
// The Redis server's own time per call of `command` ("ping", "evalsha")
// since its statistics were last reset (INFO commandstats, usec_per_call),
// in µs; < 0 with `*why` set when it cannot be read.
bool RedisResetCommandStats(const std::string& dsn, std::string* why);
double RedisServerMicrosPerCall(const std::string& dsn, const std::string& command,
                                std::string* why);
// `SELECT 1` through libpq to the server of a postgresql[+advisory]:// DSN.
double PostgresSelect1(const RunShape& shape, const std::string& dsn, std::string* why);

// How long a LockWatch with its default interval takes to report a held
// lock lost on the server: a DEL of its Redis key at a random point of the
// interval, or pg_terminate_backend of its PostgreSQL session. The median
// of `rounds`, in ns; < 0 with `*why` set when it cannot be measured.
double RedisLossDetection(int rounds, const std::string& dsn, std::string* why);
double PostgresLossDetection(int rounds, const std::string& dsn, std::string* why);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_REMOTE_PEERS_H_
