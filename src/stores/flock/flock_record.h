// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The holder record at the start of a Symfony-named lock file: 64 bytes of
// text, so that `cat` explains a lock file,
//
//   "ipclock-flock/1 fence=<20 digits> held=<0|1> pid=<9 digits>\n"
//
// written only by a process that holds the file's exclusive flock: the
// fencing counter of the last exclusive acquisition, a held mark that a
// clean release clears (a set mark under a freshly granted lock means its
// writer died holding it), and the writer's pid. PHP and flock(1) ignore the
// file's content.
//
// Readers copy the 64 bytes once and parse only that copy: a process that
// ignores the locks (or a hostile one) may rewrite the file at any moment,
// and a value checked in one read and used from another could differ.

#ifndef IPCLOCK_STORES_FLOCK_RECORD_H_
#define IPCLOCK_STORES_FLOCK_RECORD_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace ipclock {

constexpr size_t kFlockRecordSize = 64;

// The resource's name, right after the record, written once by the
// process that creates the file, so that `ipclock list` can show the
// resource rather than the file name's readable part (Symfony's naming
// keeps 50 bytes of [a-zA-Z0-9._-] and a hash):
//
//   "ipclock-name/1 <3 digits: its length>\n<the name's bytes>"
//
// A name that does not fit before the waiters' queue is not written.
// Readers trust a name only if it is the one the file is named after.
constexpr size_t kFlockNameOffset = kFlockRecordSize;
// The block for `resource`; empty when it does not fit.
std::string FormatFlockName(absl::string_view resource);
// The name in a copy of the file's first bytes; nullopt without a whole
// block.
std::optional<std::string> ParseFlockName(absl::string_view head);

struct FlockRecordFields {
  uint64_t fence = 0;
  bool held = false;
  pid_t pid = 0;
};

// Parses a record from `bytes` (kFlockRecordSize of them). False for
// anything else: a file never locked exclusively by ipclock, written by
// another tool, or cut short.
bool ParseFlockRecord(const char* bytes, FlockRecordFields* out);

// Writes the record of `fields` into `out` (kFlockRecordSize bytes; no NUL).
// `fields.pid` must fit in 9 digits (Linux pids do: pid_max <= 2^22).
void FormatFlockRecord(const FlockRecordFields& fields, char* out);

// Turns `record`, the valid record of `from`, into that of `to`, writing
// only what differs (an acquisition changes the fence by one and the held
// mark, a release the mark): the per-acquisition cost of formatting 29
// digits is spared.
void UpdateFlockRecord(char* record, const FlockRecordFields& from,
                       const FlockRecordFields& to);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_FLOCK_RECORD_H_
