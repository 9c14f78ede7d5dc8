// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The rows of dsn_fault_table_test.cc (a DSN with a bad value, the status
// its run must end with, what its message must name), the helpers that add
// the bad values of each kind of option, and the runner. The rows of one
// store run at once, a few processes at a time; a whole store's table
// takes about as long as its slowest row. Sanitizer builds run a share of
// the rows (IPCLOCK_FAULT_TABLE_ALL=1 runs them all).

#ifndef IPCLOCK_TESTS_DSN_FAULT_ROWS_H_
#define IPCLOCK_TESTS_DSN_FAULT_ROWS_H_

#include <optional>
#include <string>
#include <vector>

namespace ipclock_test {

constexpr int kUsage = 64;
constexpr int kNoPermission = 77;
// Not a status: a store that cannot be reached (nothing listens, no such
// host). Without -w the run does not wait for it: it ends with 69
// (EX_UNAVAILABLE) and a message that says how to wait for a server that
// is starting.
constexpr int kUnreachable = -1;
constexpr const char* kHowToWait = "give -w SECS";

struct Row {
  std::string dsn;
  int status;
  // The message names this (an option's name, a path).
  std::string names;
  // More `ipclock run` options (-s, --ttl SECS, ...).
  std::vector<std::string> args = {};
};

// Files of every type a DSN might name, made once.
struct Files {
  std::string dir;
  std::string fifo;
  std::string regular;
  std::string socket;
  std::string missing;
};

const Files& Fixtures();

// `base` with `query` added after '?' or '&'.
std::string With(const std::string& base, const std::string& query);

// `name` with its first byte percent-encoded: the same option.
std::string Encoded(const std::string& name);

// The bad values every option gets: an empty one, NUL and control bytes
// percent-encoded, and the option's name percent-encoded with a bad value
// (`bad`, which the store refuses).
void AddCommon(std::vector<Row>* rows, const std::string& base, const std::string& name,
               const std::string& bad, bool empty_is_bad = true);

// A whole number from `min` to `max`.
void AddNumber(std::vector<Row>* rows, const std::string& base, const std::string& name,
               long min, long max);

// A number of seconds, 0 or more (up to `max` when it has one).
void AddSeconds(std::vector<Row>* rows, const std::string& base, const std::string& name,
                std::optional<double> max = std::nullopt);

void AddBool(std::vector<Row>* rows, const std::string& base, const std::string& name);
void AddChoice(std::vector<Row>* rows, const std::string& base, const std::string& name);
void AddMode(std::vector<Row>* rows, const std::string& base, const std::string& name);

// An option naming a file that must be a regular file; `must_exist`: a
// missing one is refused too.
void AddFileOption(std::vector<Row>* rows, const std::string& base, const std::string& name,
                   bool must_exist);

// The key-naming options of Redis, memcached and ZooKeeper.
void AddNaming(std::vector<Row>* rows, const std::string& base);

// An unknown option, plain and percent-encoded; the fallback options of
// degraded mode, spelt percent-encoded, with a bad value; and `metrics=`,
// which every store takes.
void AddUnknown(std::vector<Row>* rows, const std::string& base);

// $NAME, or nullopt: skipped (failed under CI=true).
std::optional<std::string> Server(const char* name);

// Runs every row, a few at a time, and fails the test listing each row
// that did not end (or say it tries again) in time, with the wrong status,
// or without naming what it must.
void RunRows(const std::vector<Row>& all);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_DSN_FAULT_ROWS_H_
