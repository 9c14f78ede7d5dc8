// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock run` and `ipclock list` as systemd sees them, with no systemd
// running: the test binds the datagram sockets systemd would (the notify
// socket, journald's native socket), points $JOURNAL_STREAM at the file the
// command's stderr goes to, and puts holders and waiters in cgroups it
// makes the way systemd makes a unit's.

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli_util.h"
#include "datagram_socket.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

// A datagram socket bound as systemd binds its notify socket and journald
// its native one: a path, or an abstract name ("@name").
class Listener {
 public:
  explicit Listener(const std::string& address) : socket_(address) {}

  // Receives until one message contains `needle`; fails after `timeout`.
  // Returns every message received so far, in order.
  const std::vector<std::string>& Until(absl::string_view needle, double timeout = 20) {
    const double give_up = NowSeconds() + timeout;
    for (;;) {
      for (const std::string& m : messages_) {
        if (absl::StrContains(m, needle)) return messages_;
      }
      const double left = give_up - NowSeconds();
      if (left <= 0) break;
      ReceiveOne(left);
    }
    fail_msg("no message with \"%s\"; got: %s", std::string(needle).c_str(),
             absl::StrJoin(messages_, " | ").c_str());
    return messages_;
  }
  // Whatever arrived within `seconds`.
  const std::vector<std::string>& Drain(double seconds) {
    const double until = NowSeconds() + seconds;
    for (double left = seconds; left > 0; left = until - NowSeconds()) ReceiveOne(left);
    return messages_;
  }
  std::string All() const { return absl::StrJoin(messages_, "\n---\n"); }

 private:
  // Keeps the next message, if one comes within `seconds`.
  void ReceiveOne(double seconds) {
    struct pollfd p = {socket_.fd(), POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(seconds * 1000) + 1) <= 0) return;
    char buf[65536];
    const ssize_t n = recv(socket_.fd(), buf, sizeof(buf), 0);
    if (n > 0) messages_.emplace_back(buf, static_cast<size_t>(n));
  }

  BoundDatagramSocket socket_;
  std::vector<std::string> messages_;
};

// Starts `args` with `env` set in its environment only.
pid_t SpawnWithEnv(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env,
                   const SpawnOptions& options = SpawnOptions()) {
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  const pid_t pid = Spawn(WithCli(args), options);
  for (const auto& [k, v] : env) unsetenv(k.c_str());
  return pid;
}

std::string AbstractName(absl::string_view tag) {
  static int n = 0;
  return absl::StrCat("@ipclock-test-", tag, "-", getpid(), "-", n++);
}

// "DEV:INO" of `path`, as systemd writes $JOURNAL_STREAM.
std::string DevIno(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) fail_msg("stat %s: %s", path.c_str(), strerror(errno));
  return absl::StrCat(st.st_dev, ":", st.st_ino);
}

// A process's stderr into the file `path` (made empty), which stands for
// journald's stream ($JOURNAL_STREAM names it), in a session of its own.
SpawnOptions ToStream(const std::string& path) {
  WriteFile(path, "");
  SpawnOptions options;
  options.stderr_path = path;
  options.new_session = true;
  return options;
}

// The fields of one native journal entry (platform/journal.h's format).
std::map<std::string, std::string> JournalFields(absl::string_view entry) {
  std::map<std::string, std::string> out;
  while (!entry.empty()) {
    const size_t nl = entry.find('\n');
    if (nl == absl::string_view::npos) break;
    absl::string_view line = entry.substr(0, nl);
    const size_t eq = line.find('=');
    if (eq != absl::string_view::npos) {
      out[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
      entry.remove_prefix(nl + 1);
      continue;
    }
    // Binary form: NAME\n, 64-bit little-endian length, value, \n.
    entry.remove_prefix(nl + 1);
    if (entry.size() < 8) break;
    uint64_t size = 0;
    for (int i = 7; i >= 0; --i) size = size << 8 | static_cast<unsigned char>(entry[i]);
    entry.remove_prefix(8);
    out[std::string(line)] = std::string(entry.substr(0, size));
    entry.remove_prefix(std::min<size_t>(entry.size(), size + 1));
  }
  return out;
}

// --- sd_notify -----------------------------------------------------------------------

void test_notify_waiting_extend_and_ready(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", "svc"});
  const std::string address = AbstractName("notify");
  Listener manager(address);
  const pid_t waiter = SpawnWithEnv(
      {"run", "--store", store, "--key", "svc", "--notify-wait", "--notify-ready", "--", "true"},
      {{"NOTIFY_SOCKET", address}});

  // While it waits: who holds, and the start timeout extended.
  manager.Until("EXTEND_TIMEOUT_USEC=");
  const std::string waiting = manager.All();
  ExpectContains(waiting, "STATUS=waiting for \"svc\" on flock://", "waiting status");
  ExpectContains(waiting, absl::StrCat("held by pid ", holder, " (ipclock"), "holder named");
  ExpectContains(waiting, "EXTEND_TIMEOUT_USEC=30000000", "the extension");
  if (absl::StrContains(waiting, "READY=1")) fail_msg("READY=1 before the lock: %s", waiting.c_str());

  StopHolder(holder);
  manager.Until("READY=1");
  ExpectContains(manager.All(), "STATUS=holding \"svc\" on flock://", "holding status");
  ExpectContains(manager.All(), "running true as pid", "running status");
  assert_int_equal(WaitChild(waiter), 0);
}

void test_notify_path_socket_without_asking(void** state) {
  (void)state;
  // A path socket, and neither --notify-wait nor --notify-ready: STATUS=
  // only.
  const std::string store = FreshStore();
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", "plain"});
  const std::string path = ScratchFile("notify.sock");
  Listener manager(path);
  const pid_t waiter = SpawnWithEnv({"run", "--store", store, "--key", "plain", "--", "true"},
                                    {{"NOTIFY_SOCKET", path}});
  manager.Until("STATUS=waiting for \"plain\"");
  StopHolder(holder);
  manager.Until("STATUS=holding \"plain\"");
  assert_int_equal(WaitChild(waiter), 0);
  const std::string all = manager.All();
  if (absl::StrContains(all, "READY=1") || absl::StrContains(all, "EXTEND_TIMEOUT_USEC")) {
    fail_msg("sent what was not asked for: %s", all.c_str());
  }
}

void test_notify_status_on_loss(void** state) {
  (void)state;
  std::string dir;
  const std::string store = FreshStore(&dir);
  const std::string address = AbstractName("loss");
  Listener manager(address);
  const std::string ready = ScratchFile("ready");
  SpawnOptions quiet;
  quiet.new_session = true;
  quiet.stderr_path = ScratchFile("err");
  const pid_t run = SpawnWithEnv({"run", "--store", store, "--key", "lost", "--notify-ready",
                                  "--check-interval", "0.1", "--kill-after", "0", "--", "sh",
                                  "-c", ReadyScript(ready, "exec sleep 60")},
                                 {{"NOTIFY_SOCKET", address}}, quiet);
  manager.Until("READY=1");
  if (!WaitForFile(ready)) fail_msg("COMMAND did not start");
  // The lock file goes: the lock is lost.
  ExpectCode(RunProgram({"sh", "-c", absl::StrCat("rm -f '", dir, "'/sf.lost.*.lock")}), 0, "rm");
  manager.Until("exiting with status 79");
  ExpectContains(manager.All(), "STATUS=lost a held lock: ", "loss status");
  assert_int_equal(WaitChild(run), 79);
}

// --- the journal ---------------------------------------------------------------------

void test_journal_priorities_on_stderr(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", "prio"});
  const std::string err = ScratchFile("journal-stream");
  WriteFile(err, "");
  SpawnOptions to_file;
  to_file.stderr_path = err;
  // No journald: the entries go to stderr with their priorities.
  const std::map<std::string, std::string> journal = {
      {"JOURNAL_STREAM", DevIno(err)}, {"IPCLOCK_JOURNAL_SOCKET", ScratchFile("no-journald")}};
  pid_t waiter = SpawnWithEnv({"run", "--store", store, "--key", "prio", "--", "true"}, journal,
                              to_file);
  const double give_up = NowSeconds() + 20;
  while (!absl::StrContains(ReadFileOrEmpty(err), "waiting") && NowSeconds() < give_up) {
    usleep(20 * 1000);
  }
  StopHolder(holder);
  assert_int_equal(WaitChild(waiter), 0);
  std::string text = ReadFileOrEmpty(err);
  ExpectContains(text, "<6>ipclock: waiting for \"prio\"", "info priority");
  ExpectContains(text, "<6>ipclock: acquired \"prio\"", "acquired, info");
  // Every line has its priority.
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "<")) fail_msg("a line without priority: %s", text.c_str());
  }

  // An error is <3>.
  waiter = SpawnWithEnv({"run", "--store", "no-such-store://", "--key", "x", "--", "true"},
                        journal, to_file);
  assert_int_equal(WaitChild(waiter), 64);
  ExpectContains(ReadFileOrEmpty(err), "<3>ipclock", "error priority");

  // $JOURNAL_STREAM naming another file (a child of a service that sent its
  // stderr elsewhere): plain lines, and nothing said of a wait (no
  // --verbose).
  const std::string other = ScratchFile("other");
  WriteFile(other, "");
  waiter = SpawnWithEnv({"run", "--store", "no-such-store://", "--key", "x", "--", "true"},
                        {{"JOURNAL_STREAM", DevIno(other)}}, to_file);
  assert_int_equal(WaitChild(waiter), 64);
  text = ReadFileOrEmpty(err);
  if (absl::StartsWith(text, "<")) fail_msg("a priority outside the journal: %s", text.c_str());
}

void test_journal_native_entries(void** state) {
  (void)state;
  std::string dir;
  const std::string store = FreshStore(&dir);
  const std::string resource = "native\nline";  // a value with a newline: binary form
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", resource});
  const std::string socket_path = ScratchFile("journal.sock");
  Listener journald(socket_path);
  const std::string err = ScratchFile("journal-stream");
  const SpawnOptions to_file = ToStream(err);
  const pid_t run = SpawnWithEnv(
      {"run", "--store", store, "--key", resource, "--check-interval", "0.1", "--kill-after", "0",
       "--", "sleep", "60"},
      {{"JOURNAL_STREAM", DevIno(err)}, {"IPCLOCK_JOURNAL_SOCKET", socket_path}}, to_file);
  journald.Until("IPCLOCK_EVENT=waiting");
  StopHolder(holder);
  journald.Until("IPCLOCK_EVENT=acquired");
  ExpectCode(RunProgram({"sh", "-c", absl::StrCat("rm -f '", dir, "'/sf.native-line.*.lock")}),
             0, "rm");
  journald.Until("IPCLOCK_EVENT=lost");
  assert_int_equal(WaitChild(run), 79);

  std::map<std::string, std::map<std::string, std::string>> by_event;
  for (const std::string& m : journald.Drain(0.2)) {
    std::map<std::string, std::string> f = JournalFields(m);
    if (f.count("IPCLOCK_EVENT")) by_event[f["IPCLOCK_EVENT"]] = f;
  }
  for (const char* event : {"waiting", "acquired", "lost"}) {
    std::map<std::string, std::string>& f = by_event[event];
    if (f["IPCLOCK_RESOURCE"] != resource) {
      fail_msg("%s: IPCLOCK_RESOURCE is \"%s\"; entries: %s", event, f["IPCLOCK_RESOURCE"].c_str(),
               journald.All().c_str());
    }
    ExpectContains(f["IPCLOCK_STORE"], "flock://", "IPCLOCK_STORE");
    assert_string_equal(f["SYSLOG_IDENTIFIER"].c_str(), "ipclock");
  }
  assert_string_equal(by_event["waiting"]["PRIORITY"].c_str(), "6");
  assert_string_equal(by_event["acquired"]["PRIORITY"].c_str(), "6");
  assert_string_equal(by_event["lost"]["PRIORITY"].c_str(), "3");
  // flock's fence of the second acquisition of the file, on the loss too.
  assert_string_equal(by_event["acquired"]["IPCLOCK_FENCE"].c_str(), "2");
  assert_string_equal(by_event["lost"]["IPCLOCK_FENCE"].c_str(), "2");
  // The identifier is not said again in the message (journalctl shows
  // "ipclock[PID]: " in front of it).
  ExpectContains(by_event["lost"]["MESSAGE"], "lost a held lock: ", "lost MESSAGE");
  for (const char* event : {"waiting", "acquired", "lost"}) {
    if (absl::StartsWith(by_event[event]["MESSAGE"], "ipclock")) {
      fail_msg("%s: MESSAGE=%s", event, by_event[event]["MESSAGE"].c_str());
    }
  }
  // Everything went to journald, nothing to the stream.
  const std::string text = ReadFileOrEmpty(err);
  if (!text.empty()) fail_msg("stderr got: %s", text.c_str());
}

// A --limit run speaks of permits: whom it waits behind (each holder with
// its weight), the permits and slots it holds, in STATUS= and the journal,
// and a lost slot is a lost run.
void test_semaphore_notify_and_journal(void** state) {
  (void)state;
  std::string dir;
  const std::string store = FreshStore(&dir);
  const std::vector<std::string> pool = {"run", "--store", store, "--key", "pool", "--limit", "3"};
  std::vector<std::string> heavy_args = pool;
  heavy_args.insert(heavy_args.end(), {"--weight", "2"});
  const pid_t heavy = StartCliHolder(heavy_args);
  const pid_t light = StartCliHolder(pool);
  const std::string address = AbstractName("sem-notify");
  Listener manager(address);
  const std::string socket_path = ScratchFile("sem-journal.sock");
  Listener journald(socket_path);
  const std::string err = ScratchFile("sem-journal-stream");
  const SpawnOptions to_file = ToStream(err);
  std::vector<std::string> waiter_args = heavy_args;
  waiter_args.insert(waiter_args.end(), {"--notify-wait", "--notify-ready", "--check-interval",
                                         "0.1", "--kill-after", "0", "--", "sleep", "60"});
  const pid_t run = SpawnWithEnv(waiter_args,
                                 {{"NOTIFY_SOCKET", address},
                                  {"JOURNAL_STREAM", DevIno(err)},
                                  {"IPCLOCK_JOURNAL_SOCKET", socket_path}},
                                 to_file);
  manager.Until("EXTEND_TIMEOUT_USEC=");
  ExpectContains(manager.All(), "STATUS=waiting for 2 of 3 permits of \"pool\" on flock://",
                 "waiting status");
  ExpectContains(manager.All(), absl::StrCat("pid ", heavy, " (ipclock) 2"), "the heavy holder");
  ExpectContains(manager.All(), absl::StrCat("pid ", light, " (ipclock) 1"), "the light holder");
  StopHolder(heavy);
  manager.Until("READY=1");
  ExpectContains(manager.All(), "STATUS=holding 2 of 3 permits of \"pool\" (slots ",
                 "holding status");
  journald.Until("IPCLOCK_EVENT=acquired");
  StopHolder(light);
  ExpectCode(RunProgram({"sh", "-c", absl::StrCat("rm -f '", dir, "'/sf.pool_*.lock")}), 0, "rm");
  journald.Until("IPCLOCK_EVENT=lost");
  assert_int_equal(WaitChild(run), 79);
  for (const std::string& m : journald.Drain(0.2)) {
    std::map<std::string, std::string> f = JournalFields(m);
    if (f["IPCLOCK_EVENT"] == "acquired") {
      ExpectContains(f["MESSAGE"], "acquired 2 of 3 permits of \"pool\" (slots ", "MESSAGE");
      assert_string_equal(f["IPCLOCK_RESOURCE"].c_str(), "pool");
    }
  }
  ExpectContains(journald.All(), "IPCLOCK_EVENT=waiting", "the wait is journalled");
}

// --- who holds, who waits ------------------------------------------------------------

// A cgroup v2 tree of the test's own, made as systemd makes a unit's
// (SLICE.slice/UNIT), under wherever cgroup2 is mounted (/sys/fs/cgroup, or
// /sys/fs/cgroup/unified on hybrid hosts). Removed with its children.
class TestCgroups {
 public:
  // Skips the test where no cgroup can be made (not root, no cgroup2).
  TestCgroups() {
    SKIP_UNLESS_ROOT();
    for (absl::string_view line :
         absl::StrSplit(ReadFileOrEmpty("/proc/self/mounts"), '\n', absl::SkipEmpty())) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f.size() > 2 && f[2] == "cgroup2") {
        root_ = f[1];
        break;
      }
    }
    if (root_.empty()) {
      fprintf(stderr, "no cgroup2 mount; skipped\n");
      skip();
    }
    slice_ = absl::StrCat("/ipclock-test-", getpid(), ".slice");
    if (mkdir((root_ + slice_).c_str(), 0755) != 0) {
      fprintf(stderr, "cannot make a cgroup under %s: %s; skipped\n", root_.c_str(),
              strerror(errno));
      skip();
    }
  }
  ~TestCgroups() {
    for (auto it = units_.rbegin(); it != units_.rend(); ++it) rmdir(it->c_str());
    rmdir((root_ + slice_).c_str());
  }
  // Makes SLICE/unit and moves `pid` into it; returns the cgroup path as
  // /proc/PID/cgroup shows it.
  std::string Move(pid_t pid, const std::string& unit) {
    const std::string path = absl::StrCat(slice_, "/", unit);
    if (mkdir((root_ + path).c_str(), 0755) != 0 && errno != EEXIST) {
      fail_msg("mkdir %s: %s", (root_ + path).c_str(), strerror(errno));
    }
    units_.push_back(root_ + path);
    if (!WriteFile(root_ + path + "/cgroup.procs", absl::StrCat(pid))) {
      fail_msg("cannot move %d into %s", pid, path.c_str());
    }
    return path;
  }

 private:
  std::string root_;
  std::string slice_;
  std::vector<std::string> units_;
};

void test_list_shows_units_and_waiters(void** state) {
  (void)state;
  TestCgroups cgroups;
  const std::string store = FreshStore();
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", "unit-lock"});
  const std::string holder_cgroup = cgroups.Move(holder, "holder.service");
  SpawnOptions quiet;
  quiet.new_process_group = true;
  const pid_t waiter = Spawn(
      WithCli({"run", "--store", store, "--key", "unit-lock", "-w", "60", "--", "true"}), quiet);
  cgroups.Move(waiter, "waiter.service");

  // The waiter queues in the kernel a moment after it starts.
  std::string json;
  const double give_up = NowSeconds() + 20;
  do {
    CliResult r = RunCli({"list", "--store", store, "--json"});
    ExpectCode(r, 0, "list --json");
    json = r.out;
    if (absl::StrContains(json, "waiter.service")) break;
    usleep(20 * 1000);
  } while (NowSeconds() < give_up);
  ExpectContains(json, absl::StrCat("\"pid\":", holder), "holder pid");
  ExpectContains(json, "\"unit\":\"holder.service\"", "holder unit");
  ExpectContains(json, absl::StrCat("\"cgroup\":\"", holder_cgroup, "\""), "holder cgroup");
  ExpectContains(json, absl::StrCat("\"command_line\":\"", Cli(), " run --store"), "cmdline");
  ExpectContains(json, "\"held_seconds\":", "held for");
  ExpectContains(json, "\"waiters\":1", "waiter count");
  ExpectContains(json,
                 absl::StrCat("\"waiting\":[{\"pid\":", waiter,
                              ",\"command\":\"ipclock\",\"unit\":\"waiter.service\","
                              "\"mode\":\"exclusive\",\"since\":null,\"waited_seconds\":null}]"),
                 "the waiter, named");

  CliResult table = RunCli({"list", "--store", store});
  ExpectCode(table, 0, "list");
  ExpectContains(table.out, "UNIT", "UNIT column");
  ExpectContains(table.out, "holder.service", "holder's unit in the table");
  ExpectContains(table.out, "Waiting for them:", "waiters' table");
  ExpectContains(table.out, absl::StrCat(waiter), "waiter's pid in the table");
  ExpectContains(table.out, "waiter.service", "waiter's unit in the table");

  // Gauges for node_exporter, which promtool accepts.
  CliResult metrics = RunCli({"list", "--store", store, "--format=openmetrics"});
  ExpectCode(metrics, 0, "list --format=openmetrics");
  // The lock is its file, whoever holds it; who holds is in the info gauge.
  ExpectContains(metrics.out,
                 absl::StrCat("\",resource=\"unit-lock\",mode=\"exclusive\",pid=\"", holder,
                              "\",command=\"ipclock\",unit=\"holder.service\",host=\"\"} 1"),
                 "holder info gauge");
  ExpectContains(metrics.out,
                 absl::StrCat("ipclock_lock_holder_info{store=\"", store, "\",lock=\"sf.unit-lock."),
                 "holder info gauge's lock");
  const size_t holders = metrics.out.find(
      absl::StrCat("ipclock_lock_holders{store=\"", store, "\",lock=\"sf.unit-lock."));
  if (holders == std::string::npos ||
      metrics.out.compare(metrics.out.find('\n', holders) - 25, 25,
                          "\",resource=\"unit-lock\"} 1") != 0) {
    fail_msg("no holders gauge of 1: %s", metrics.out.c_str());
  }
  ExpectContains(metrics.out,
                 absl::StrCat("ipclock_lock_waiters{store=\"", store, "\",lock=\"sf.unit-lock."),
                 "waiters gauge");
  ExpectContains(metrics.out, "ipclock_lock_held_seconds{", "held gauge");
  ExpectContains(metrics.out, "# EOF\n", "OpenMetrics end");
  const std::string file = ScratchFile("metrics.prom");
  WriteFile(file, metrics.out);
  const std::string promtool = FindInPath("promtool");
  if (promtool.empty()) {
    if (getenv("CI") != nullptr) fail_msg("promtool (Debian's prometheus) is not installed");
    fprintf(stderr, "no promtool: the text's syntax is not checked\n");
  } else {
    CliResult check = RunProgram({"sh", "-c", absl::StrCat(promtool, " check metrics < '", file,
                                                          "'")});
    ExpectCode(check, 0, "promtool check metrics");
  }

  // A waiting run's STATUS= names the holder's unit.
  const std::string address = AbstractName("unit");
  Listener manager(address);
  const pid_t second = SpawnWithEnv({"run", "--store", store, "--key", "unit-lock", "--", "true"},
                                    {{"NOTIFY_SOCKET", address}}, quiet);
  manager.Until(absl::StrCat("held by pid ", holder, " (ipclock, holder.service) since "));

  StopHolder(holder);
  assert_int_equal(WaitChild(waiter), 0);
  assert_int_equal(WaitChild(second), 0);
}

void test_list_format_usage(void** state) {
  (void)state;
  CliResult r = RunCli({"list", "--format", "yaml"});
  ExpectCode(r, 64, "list --format yaml");
  ExpectContains(r.err, "invalid --format 'yaml'", "says which");
  r = RunCli({"list", "--store", FreshStore(), "--format=openmetrics"});
  ExpectCode(r, 0, "empty store");
  // Families without samples, and the end.
  ExpectContains(r.out, "# TYPE ipclock_lock_holders gauge", "family");
  ExpectContains(r.out, "# EOF\n", "end");
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_notify_waiting_extend_and_ready),
      cmocka_unit_test(test_notify_path_socket_without_asking),
      cmocka_unit_test(test_notify_status_on_loss),
      cmocka_unit_test(test_journal_priorities_on_stderr),
      cmocka_unit_test(test_journal_native_entries),
      cmocka_unit_test(test_semaphore_notify_and_journal),
      cmocka_unit_test(test_list_shows_units_and_waiters),
      cmocka_unit_test(test_list_format_usage),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
