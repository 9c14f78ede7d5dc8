// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The rows of dsn_fault_table_test and how they run (dsn_fault_rows.h).

#include "dsn_fault_rows.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "cli_util.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

// How long a run may take to end, or to say it tries again: 2 s, times the
// slowdown of a sanitizer build, times the machine's load per CPU when it
// runs more than it has CPUs for (a shared machine must not fail a run that
// only waited for a CPU). A run that waits on a permanent fault says that it
// tries again, and fails at once, whatever the limit.
double LimitSeconds() {
  double limit = 2;
  if (getenv("TSAN_OPTIONS") != nullptr) limit *= 5;
  if (getenv("ASAN_OPTIONS") != nullptr) limit *= 3;
  double load = 0;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (getloadavg(&load, 1) == 1 && cpus > 0 && load > static_cast<double>(cpus)) {
    limit *= load / static_cast<double>(cpus);
  }
  return limit;
}
constexpr int kParallel = 8;

// Which rows run: every row in a plain build; every 3rd under ASan and every
// 4th under TSan, where each run of the CLI costs several times as much and
// the fuzzers (ASan+UBSan) already feed the same parsers and checks far more
// inputs. IPCLOCK_FAULT_TABLE_ALL=1 runs every row in any build.
size_t Stride() {
  const char* all = getenv("IPCLOCK_FAULT_TABLE_ALL");
  if (all != nullptr && std::string(all) == "1") return 1;
  if (getenv("TSAN_OPTIONS") != nullptr) return 4;
  if (getenv("ASAN_OPTIONS") != nullptr) return 3;
  return 1;
}

struct Running {
  const Row* row;
  pid_t pid;
  std::string err_path;
  double started;
};

std::string Describe(const Row& row) {
  return absl::StrCat("\"", row.dsn, "\"",
                      row.args.empty() ? "" : absl::StrCat(" ", absl::StrJoin(row.args, " ")));
}

}  // namespace

const Files& Fixtures() {
  static const Files* files = [] {
    auto* f = new Files;
    f->dir = MakeTempDir();
    f->fifo = f->dir + "/fifo";
    f->regular = f->dir + "/regular";
    f->socket = f->dir + "/socket";
    f->missing = f->dir + "/missing";
    if (mkfifo(f->fifo.c_str(), 0600) != 0) abort();
    if (!WriteFile(f->regular, "not a database, not a socket\n")) abort();
    // A socket nobody accepts on: a file of the socket type.
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", f->socket.c_str());
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) abort();
    return f;
  }();
  return *files;
}

// `base` with `query` added after '?' or '&'.
std::string With(const std::string& base, const std::string& query) {
  if (query.empty()) return base;
  return absl::StrCat(base, base.find('?') == std::string::npos ? "?" : "&", query);
}

// `name` with its first byte percent-encoded: the same option.
std::string Encoded(const std::string& name) {
  char hex[4];
  snprintf(hex, sizeof(hex), "%%%02X", static_cast<unsigned char>(name[0]));
  return absl::StrCat(hex, name.substr(1));
}

// The bad values every option gets: an empty one, NUL and control bytes
// percent-encoded, and the option's name percent-encoded with a bad value
// (`bad`, which the store refuses).
void AddCommon(std::vector<Row>* rows, const std::string& base, const std::string& name,
               const std::string& bad, bool empty_is_bad) {
  if (empty_is_bad) rows->push_back({With(base, name + "="), kUsage, name});
  rows->push_back({With(base, name + "=%00"), kUsage, name});
  rows->push_back({With(base, name + "=1%0A2"), kUsage, name});
  rows->push_back({With(base, Encoded(name) + "=" + bad), kUsage, name});
}

// A whole number from `min` to `max`.
void AddNumber(std::vector<Row>* rows, const std::string& base, const std::string& name,
               long min, long max) {
  AddCommon(rows, base, name, "-1");
  for (const std::string& v :
       {std::string("abc"), std::string("1.5"), std::string("99999999999999999999"),
        absl::StrCat(min - 1), absl::StrCat(max) + "0"}) {
    rows->push_back({With(base, name + "=" + v), kUsage, name});
  }
}

// A number of seconds, 0 or more (up to `max` when it has one).
void AddSeconds(std::vector<Row>* rows, const std::string& base, const std::string& name,
                std::optional<double> max) {
  AddCommon(rows, base, name, "-1");
  for (const char* v : {"-1", "abc", "nan", "inf", "1e400"}) {
    rows->push_back({With(base, name + "=" + v), kUsage, name});
  }
  if (max) rows->push_back({With(base, name + "=" + absl::StrCat(*max * 10)), kUsage, name});
}

void AddBool(std::vector<Row>* rows, const std::string& base, const std::string& name) {
  AddCommon(rows, base, name, "maybe");
  rows->push_back({With(base, name + "=maybe"), kUsage, name});
  rows->push_back({With(base, name + "=2"), kUsage, name});
}

void AddChoice(std::vector<Row>* rows, const std::string& base, const std::string& name) {
  AddCommon(rows, base, name, "bogus");
  rows->push_back({With(base, name + "=bogus"), kUsage, name});
}

void AddMode(std::vector<Row>* rows, const std::string& base, const std::string& name) {
  AddCommon(rows, base, name, "0800");
  for (const char* v : {"0800", "abc", "77777", "-1"}) {
    rows->push_back({With(base, name + "=" + v), kUsage, name});
  }
}

// An option naming a file that must be a regular file; `must_exist`: a
// missing one is refused too.
void AddFileOption(std::vector<Row>* rows, const std::string& base, const std::string& name,
                   bool must_exist) {
  const Files& f = Fixtures();
  for (const std::string& path : {f.fifo, f.dir, f.socket, std::string("/dev/zero"),
                                  std::string("/proc/self/status")}) {
    rows->push_back({With(base, name + "=" + path), kUsage, name});
  }
  if (must_exist) rows->push_back({With(base, name + "=" + f.missing), kUsage, name});
  rows->push_back({With(base, Encoded(name) + "=" + f.fifo), kUsage, name});
}

// The key-naming options of Redis, memcached and ZooKeeper.
void AddNaming(std::vector<Row>* rows, const std::string& base) {
  rows->push_back({With(base, "secret=short"), kUsage, "short"});
  rows->push_back({With(base, "secret=x&secret_file=/x"), kUsage, "secret_file"});
  rows->push_back({With(base, "secret_file="), kUsage, "secret_file"});
  AddFileOption(rows, base, "secret_file", /*must_exist=*/true);
  AddChoice(rows, base, "naming");
  rows->push_back({With(base, "prefix=%01"), kUsage, "prefix"});
}

// An unknown option, plain and percent-encoded; the fallback options of
// degraded mode, spelt percent-encoded, with a bad value; and `metrics=`,
// which every store takes.
void AddUnknown(std::vector<Row>* rows, const std::string& base) {
  AddChoice(rows, base, "metrics");
  rows->push_back({With(base, "colour=blue"), kUsage, "colour"});
  rows->push_back({With(base, "c%6Flour=blue"), kUsage, "colour"});
  rows->push_back({With(base, "de%67raded=loud"), kUsage, "degraded"});
}

// $NAME, or nullopt: skipped (failed under CI=true).
std::optional<std::string> Server(const char* name) {
  const char* v = getenv(name);
  if (v != nullptr && v[0] != '\0') return std::string(v);
  const char* ci = getenv("CI");
  if (ci != nullptr && std::string(ci) == "true") fail_msg("%s is unset under CI=true", name);
  print_message("%s unset: its rows are skipped\n", name);
  return std::nullopt;
}

// Runs every row, kParallel at a time, and fails the test listing each row
// that did not end in time, with the wrong status, or without naming what
// it must.
void RunRows(const std::vector<Row>& all) {
  std::vector<const Row*> rows;
  const size_t stride = Stride();
  for (size_t i = 0; i < all.size(); i += stride) {
    const Row& r = all[i];
    absl::StatusOr<ipclock::StoreInfo> info = ipclock::FindStore(r.dsn.empty() ? "flock" : r.dsn);
    if (info.ok() && !info->built) continue;  // a store this build left out
    rows.push_back(&r);
  }
  const double limit = LimitSeconds();
  std::vector<std::string> failures;
  std::vector<Running> running;
  size_t next = 0;
  double slowest = 0;
  while (next < rows.size() || !running.empty()) {
    while (next < rows.size() && running.size() < kParallel) {
      const Row& row = *rows[next++];
      // A row without a DSN locks a --file of its own.
      std::vector<std::string> argv = {Cli(), "run"};
      if (!row.dsn.empty()) argv.insert(argv.end(), {"--store", row.dsn, "--key", "fault-table"});
      argv.insert(argv.end(), row.args.begin(), row.args.end());
      argv.insert(argv.end(), {"--", "true"});
      SpawnOptions options;
      options.stdout_path = "/dev/null";
      options.stderr_path = ScratchFile("err");
      options.new_process_group = true;
      running.push_back({&row, Spawn(argv, options), options.stderr_path, NowSeconds()});
    }
    usleep(10 * 1000);
    for (auto it = running.begin(); it != running.end();) {
      const Row& row = *it->row;
      const double took = NowSeconds() - it->started;
      int wstatus = 0;
      const pid_t done = waitpid(it->pid, &wstatus, WNOHANG);
      const std::string err = ReadFileOrEmpty(it->err_path);
      std::string failure;
      bool finished = true;
      if (done == it->pid) {
        const int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
        const int expected = row.status == kUnreachable ? 69 : row.status;
        if (code != expected) {
          failure = absl::StrCat("exit ", code, ", expected ", expected);
        } else if (!absl::StrContains(err, row.names)) {
          failure = absl::StrCat("the message does not name \"", row.names, "\"");
        } else if (absl::StrContains(err, ": ipclock: ")) {
          failure = "the message wraps another that starts with \"ipclock: \" again";
        } else if (row.status == kUnreachable && !absl::StrContains(err, kHowToWait)) {
          failure = absl::StrCat("the message does not say \"", kHowToWait, "\"");
        }
      } else if (absl::StrContains(err, "trying again")) {
        failure = "tries again without -w";
      } else if (took > limit) {
        failure = absl::StrCat("still running after ", limit, " s");
      } else {
        finished = false;
      }
      if (!finished) {
        ++it;
        continue;
      }
      if (done != it->pid) {
        kill(-it->pid, SIGKILL);
        waitpid(it->pid, &wstatus, 0);
      }
      slowest = std::max(slowest, took);
      if (!failure.empty()) {
        failures.push_back(absl::StrCat(Describe(row), ": ", failure, "; stderr: ", err));
      }
      it = running.erase(it);
    }
  }
  print_message("%zu of %zu rows, the slowest %.2f s (limit %.1f s)\n", rows.size(), all.size(),
                slowest, limit);
  if (!failures.empty()) {
    fail_msg("%zu of %zu rows failed:\n%s", failures.size(), rows.size(),
             absl::StrJoin(failures, "\n").c_str());
  }
}

}  // namespace ipclock_test
