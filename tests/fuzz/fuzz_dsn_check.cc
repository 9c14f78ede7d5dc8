// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes every store's own DSN check through CheckDsn(), which reads a DSN
// as its store would (the URL forms, PDO's `pgsql:` and `mysql:` bodies,
// Redis URLs, memcached's host[...] lists, ZooKeeper's and etcd's server
// lists, a combined store's members, degraded mode's fallback) and checks its
// values, its named files and its client library's limits without
// connecting or creating anything. The first byte picks a form, the rest
// is the DSN after it. Two properties hold for every input:
//
//   - the check finds only permanent faults (ipclock/errors.h): a DSN is
//     never "transient", so nothing would wait on a DSN that cannot work;
//   - an option's name written percent-encoded is the same option: the
//     DSN with every option name's first byte encoded checks the same.
//
// A violation aborts, and the input is kept as a crash.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "ipclock/errors.h"
#include "ipclock/store_factory.h"

namespace {

constexpr absl::string_view kForms[] = {
    "",
    "flock://",
    "flock:",
    "shm://",
    "semaphore:?",
    "posix-semaphore:?",
    "in-memory?",
    "combined:?",
    "combined:?store1=in-memory&",
    "redis://",
    "redis://127.0.0.1:1?",
    "redis://127.0.0.1:1?fallback=",
    "postgresql+advisory://",
    "postgresql+advisory://u:p@127.0.0.1:1/db?",
    "postgresql://",
    "pgsql:",
    "mysql+advisory://",
    "mysql+advisory://u:p@127.0.0.1:1/db?",
    "mysql://",
    "mysql:",
    "sqlite://",
    "sqlite:",
    "memcached://",
    "memcached:?",
    "memcached://127.0.0.1:1?",
    "zookeeper://",
    "zookeeper://127.0.0.1:1?",
    "etcd://",
    "etcd://127.0.0.1:1?",
    "etcds://127.0.0.1:1?",
};

// Whether `name` may be re-spelt with its first byte percent-encoded: a
// name written plainly (a name that holds '%' already is left alone).
bool Respellable(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c == '%' || c == '=' || c == '?' || c == '#' || static_cast<unsigned char>(c) < 0x21) {
      return false;
    }
  }
  return true;
}

// `dsn` with the first byte of each option name of its query written as a
// percent-escape; `dsn` itself when it has no such name.
std::string WithEncodedNames(absl::string_view dsn) {
  const size_t q = dsn.find('?');
  if (q == absl::string_view::npos) return std::string(dsn);
  std::vector<std::string> pairs;
  for (absl::string_view pair : absl::StrSplit(dsn.substr(q + 1), '&')) {
    const size_t eq = pair.find('=');
    absl::string_view name = pair.substr(0, eq);
    if (!Respellable(name)) {
      pairs.emplace_back(pair);
      continue;
    }
    char escape[4];
    snprintf(escape, sizeof(escape), "%%%02X", static_cast<unsigned char>(name[0]));
    pairs.push_back(absl::StrCat(escape, pair.substr(1)));
  }
  return absl::StrCat(dsn.substr(0, q + 1), absl::StrJoin(pairs, "&"));
}

void Fail(const char* what, const std::string& dsn, const absl::Status& s) {
  fprintf(stderr, "fuzz_dsn_check: %s\n  DSN: %s\n  status: %s\n", what,
          absl::CHexEscape(dsn).c_str(), s.ToString().c_str());
  abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view form = kForms[data[0] % (sizeof(kForms) / sizeof(kForms[0]))];
  const std::string dsn =
      absl::StrCat(form, absl::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  ipclock::StoreOptions options;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  const absl::Status checked = ipclock::CheckDsn(dsn, options).status();
  if (ipclock::IsTransient(checked)) Fail("a DSN check found a transient fault", dsn, checked);
  const std::string respelt = WithEncodedNames(dsn);
  if (respelt != dsn) {
    const absl::Status again = ipclock::CheckDsn(respelt, options).status();
    if (again.code() != checked.code()) {
      Fail(absl::StrCat("the DSN with encoded option names checks differently (",
                        again.ToString(), ")")
               .c_str(),
           dsn, checked);
    }
  }
  return 0;
}
