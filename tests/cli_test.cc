// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// End-to-end tests of `ipclock run`: the real binary, spawned as a shell
// script would, and util-linux flock(1) on the same files. The exit-status
// table onwards is in cli_test_terminal.cc, for length.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli_util.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/stores/shm_store.h"
#include "spawn_util.h"
#include "cli_test.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

// --- Exit statuses ---------------------------------------------------------------

void test_exit_status_passes_through(void** state) {
  (void)state;
  const std::string store = FreshStore();
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "--", "true"}), 0, "true");
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "--", "sh", "-c", "exit 7"}),
             7, "exit 7");
  // No "--": the first word that is not an option starts the command, and
  // its own options are left alone.
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "sh", "-c", "exit 5"}), 5,
             "without --");
}

void test_signal_death_is_128_plus_n(void** state) {
  (void)state;
  const std::string store = FreshStore();
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "--", "sh", "-c",
                     "kill -USR1 $$"}),
             128 + SIGUSR1, "killed by SIGUSR1");
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "--", "sh", "-c",
                     "kill -KILL $$"}),
             128 + SIGKILL, "killed by SIGKILL");
}

void test_missing_command(void** state) {
  (void)state;
  const std::string store = FreshStore();
  CliResult r = RunCli({"run", "--store", store, "--key", "k", "--",
                        "ipclock-test-no-such-command"});
  ExpectCode(r, 127, "missing command");
  ExpectContains(r.err, "ipclock-test-no-such-command", "names the command");
  const std::string not_executable = ScratchFile("plain");
  assert_true(WriteFile(not_executable, "#!/bin/sh\n"));
  chmod(not_executable.c_str(), 0644);
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "--", not_executable}), 126,
             "not executable");
}

void test_shell_command(void** state) {
  (void)state;
  const std::string store = FreshStore();
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-c", "exit $((3 + 4))"}), 7,
             "-c through sh");
  CliResult r = RunCli({"run", "--store", store, "--key", "k", "--command",
                        "echo \"$IPCLOCK_RESOURCE\" | tr k K"});
  ExpectCode(r, 0, "--command with a pipe");
  assert_string_equal(r.out.c_str(), "K\n");
}

// --- Conflicts and waits ---------------------------------------------------------

void test_nonblock_conflict(void** state) {
  (void)state;
  std::string dir;
  const std::string store = FreshStore(&dir);
  pid_t holder = StartCliHolder({"run", "--store", store, "--key", "k"});
  const std::string ran = dir + "/ran";
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-n", "--", "touch", ran}), 1,
             "-n on a held lock");
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "--nonblock", "-E", "42", "--",
                     "touch", ran}),
             42, "-n -E 42");
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-w", "0", "--",
                     "touch", ran}),
             1, "-w 0");
  assert_false(FileExists(ran));
  assert_int_equal(StopHolder(holder), 128 + SIGTERM);
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-n", "--", "touch", ran}), 0,
             "-n once free");
  assert_true(FileExists(ran));
}

void test_wait_gives_up(void** state) {
  (void)state;
  const std::string store = FreshStore();
  pid_t holder = StartCliHolder({"run", "--store", store, "--key", "k"});
  CliResult r = RunCli({"run", "--store", store, "--key", "k", "-w", "0.3", "--", "true"});
  ExpectCode(r, 1, "-w 0.3 on a held lock");
  print_message("-w 0.3 gave up after %.3f s\n", r.seconds);
  assert_true(r.seconds >= 0.25);
  assert_true(r.seconds < 5);
  r = RunCli({"run", "--store", store, "--key", "k", "--timeout", "0.2", "-E", "3",
              "--verbose", "--", "true"});
  ExpectCode(r, 3, "--timeout 0.2 -E 3");
  ExpectContains(r.err, "gave up", "--verbose on a conflict");
  StopHolder(holder);
}

// The time from the holder's command ending to the waiter's starting: the
// holder's exit, its release, the kernel waking the waiter, fork and exec.
void test_waiter_acquires_when_holder_exits(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string ready = ScratchFile("ready");
  const std::string holder_end = ScratchFile("holder-end");
  const std::string waiter_start = ScratchFile("waiter-start");
  pid_t holder = StartHolder(
      WithCli({"run", "--store", store, "--key", "k", "--", "sh", "-c",
               absl::StrCat(": > '", ready, "'; sleep 0.5; date +%s.%N > '",
                            holder_end, "'")}),
      ready);
  pid_t waiter = Spawn(WithCli({"run", "--store", store, "--key", "k", "--", "sh", "-c",
                                absl::StrCat("date +%s.%N > '", waiter_start, "'")}));
  assert_int_equal(WaitChild(holder), 0);
  assert_int_equal(WaitChild(waiter, 10), 0);
  double end = 0, start = 0;
  assert_true(absl::SimpleAtod(absl::StripAsciiWhitespace(ReadFileOrEmpty(holder_end)), &end));
  assert_true(absl::SimpleAtod(absl::StripAsciiWhitespace(ReadFileOrEmpty(waiter_start)),
                               &start));
  print_message("release-to-acquire gap (command end to next command start): %.2f ms\n",
                (start - end) * 1e3);
  assert_true(start >= end);
  assert_true(start - end < 2.0);
}

void test_runs_never_overlap(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string log = ScratchFile("log");
  const std::string script = absl::StrCat("echo \"start $$\" >> '", log,
                                          "'; sleep 0.03; echo \"end $$\" >> '", log, "'");
  constexpr int kRuns = 8;
  std::vector<pid_t> pids;
  for (int i = 0; i < kRuns; ++i) {
    pids.push_back(
        Spawn(WithCli({"run", "--store", store, "--key", "shared-log", "-c", script})));
  }
  for (pid_t pid : pids) assert_int_equal(WaitChild(pid), 0);
  std::vector<std::string> lines = absl::StrSplit(ReadFileOrEmpty(log), '\n', absl::SkipEmpty());
  assert_int_equal(lines.size(), 2 * kRuns);
  for (size_t i = 0; i < lines.size(); i += 2) {
    if (!absl::StartsWith(lines[i], "start ") || !absl::StartsWith(lines[i + 1], "end ") ||
        lines[i].substr(6) != lines[i + 1].substr(4)) {
      fail_msg("runs overlapped at line %zu: '%s' then '%s'", i, lines[i].c_str(),
               lines[i + 1].c_str());
    }
  }
}

void test_shared_holders_coexist(void** state) {
  (void)state;
  const std::string store = FreshStore();
  pid_t holder = StartCliHolder({"run", "--store", store, "--key", "k", "-s"});
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-s", "-n", "--", "true"}), 0,
             "second shared holder");
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-n", "--", "true"}), 1,
             "exclusive beside a shared holder");
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-s", "-x", "-n", "--", "true"}),
             1, "-x after -s wins");
  StopHolder(holder);
}

void test_key_orders_do_not_deadlock(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string cli = Cli();
  auto loop = [&](std::vector<std::string> keys) {
    return ForkChild([=]() {
      for (int i = 0; i < 15; ++i) {
        std::vector<std::string> argv = {cli, "run", "--store", store};
        for (const std::string& k : keys) argv.insert(argv.end(), {"--key", k});
        argv.insert(argv.end(), {"--", "sleep", "0.005"});
        if (WaitPlain(Spawn(argv), 20) != 0) return 1;
      }
      return 0;
    });
  };
  pid_t a = loop({"alpha", "beta", "gamma"});
  pid_t b = loop({"gamma", "beta", "alpha"});
  pid_t c = loop({"beta", "gamma", "alpha", "beta"});
  assert_int_equal(WaitChild(a, 60), 0);
  assert_int_equal(WaitChild(b, 60), 0);
  assert_int_equal(WaitChild(c, 60), 0);
}

// --- What the command sees ---------------------------------------------------------

void test_environment(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string show =
      "printf '%s|%s|%s|%s' \"$IPCLOCK_RESOURCE\" \"$IPCLOCK_FENCE\" \"$IPCLOCK_STORE\" "
      "\"${IPCLOCK_PREVIOUS_OWNER_DIED-unset}\"";
  CliResult first = RunCli({"run", "--store", store, "--key", "invoice-42", "-c", show});
  CliResult second = RunCli({"run", "--store", store, "--key", "invoice-42", "-c", show});
  ExpectCode(first, 0, "first run");
  ExpectCode(second, 0, "second run");
  std::vector<std::string> a = absl::StrSplit(first.out, '|');
  std::vector<std::string> b = absl::StrSplit(second.out, '|');
  assert_int_equal(a.size(), 4);
  assert_int_equal(b.size(), 4);
  assert_string_equal(a[0].c_str(), "invoice-42");
  assert_string_equal(a[2].c_str(), store.c_str());
  assert_string_equal(a[3].c_str(), "unset");
  uint64_t fence_a = 0, fence_b = 0;
  assert_true(absl::SimpleAtoi(a[1], &fence_a));
  assert_true(absl::SimpleAtoi(b[1], &fence_b));
  assert_int_equal(fence_b, fence_a + 1);

  // Several keys: the first in sorted order, and all of them.
  CliResult multi = RunCli({"run", "--store", store, "--key", "b", "--key", "a", "--key",
                            "b", "-c", "printf '%s/%s' \"$IPCLOCK_RESOURCE\" \"$IPCLOCK_RESOURCES\""});
  ExpectCode(multi, 0, "several keys");
  assert_string_equal(multi.out.c_str(), "a/a\nb");

  // An ipclock killed outright leaves its mark; the next holder is told.
  pid_t holder = StartCliHolder({"run", "--store", store, "--key", "invoice-42"});
  StopHolder(holder, SIGKILL);
  CliResult after = RunCli({"run", "--store", store, "--key", "invoice-42", "-c", show});
  ExpectCode(after, 0, "run after a holder was killed");
  std::vector<std::string> c = absl::StrSplit(after.out, '|');
  assert_int_equal(c.size(), 4);
  assert_string_equal(c[3].c_str(), "1");
}

// COMMAND killed by a signal while `ipclock` lives (the OOM killer, kill -9
// of the command alone) died inside the lock: `ipclock` lets the lock go as
// that death would have, and the next holder is told, on every local store.
// A command that exits, whatever its status, is not a death.
void test_command_killed_by_a_signal_is_told(void** state) {
  (void)state;
  const std::string show = "printf '%s' \"${IPCLOCK_PREVIOUS_OWNER_DIED-unset}\"";
  for (const std::string& store :
       {FreshStore(), std::string("semaphore"), std::string("posix-semaphore"),
        absl::StrCat("shm://cli-died-", getpid())}) {
    const std::string key = absl::StrCat("died-", getpid());
    CliResult killed = RunCli({"run", "--store", store, "--key", key, "-c", "kill -9 $$"});
    ExpectCode(killed, 128 + SIGKILL, "a command that kills itself");
    CliResult next = RunCli({"run", "--store", store, "--key", key, "-c", show});
    ExpectCode(next, 0, "the run after it");
    if (next.out != "1") {
      fail_msg("%s: the run after a command killed by SIGKILL saw "
               "IPCLOCK_PREVIOUS_OWNER_DIED=%s, not 1", store.c_str(), next.out.c_str());
    }
    CliResult failed = RunCli({"run", "--store", store, "--key", key, "-c", "exit 3"});
    ExpectCode(failed, 3, "a command that fails");
    CliResult after = RunCli({"run", "--store", store, "--key", key, "-c", show});
    ExpectCode(after, 0, "the run after a failure");
    assert_string_equal(after.out.c_str(), "unset");
    if (absl::StartsWith(store, "shm://")) {
      ipclock::RemoveShmSegment(store.substr(6)).IgnoreError();
    }
  }
}

void test_verbose(void** state) {
  (void)state;
  const std::string store = FreshStore();
  CliResult r = RunCli({"run", "--verbose", "--store", store, "--key", "k", "--", "true"});
  ExpectCode(r, 0, "--verbose");
  ExpectContains(r.err, "acquiring exclusive lock on \"k\"", "--verbose start");
  ExpectContains(r.err, "fence 1", "--verbose fence");
  ExpectContains(r.err, "released \"k\"", "--verbose release");
}

// --- Signals and the lock's lifetime ---------------------------------------------

void test_sigterm_reaches_command_before_release(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string ready = ScratchFile("ready");
  const std::string seen = ScratchFile("term-seen");
  // The trap takes a second to finish, as a command cleaning up would; the
  // lock must stay held for all of it.
  const std::string script = absl::StrCat(
      "trap 'sleep 1; : > \"", seen, "\"; exit 3' TERM; : > '", ready,
      "'; while :; do sleep 0.05; done");
  pid_t holder = StartHolder(
      WithCli({"run", "--store", store, "--key", "k", "--", "sh", "-c", script}), ready);
  kill(holder, SIGTERM);  // ipclock only, not its process group
  usleep(300 * 1000);
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-n", "--", "true"}), 1,
             "lock held while the command handles SIGTERM");
  assert_false(FileExists(seen));
  assert_int_equal(WaitChild(holder), 3);
  assert_true(FileExists(seen));
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-n", "--", "true"}), 0,
             "free after the command ended");
}

// Polls `ipclock list --json` on `store` until its output has `needle`.
void AwaitListed(const std::string& store, absl::string_view needle) {
  const double t0 = NowSeconds();
  for (;;) {
    CliResult r = RunCli({"list", "--json", "--store", store, "--key", "k"});
    if (absl::StrContains(r.out, needle)) return;
    if (NowSeconds() - t0 > 20) fail_msg("never listed %s: %s", std::string(needle).c_str(),
                                         r.out.c_str());
    usleep(20 * 1000);
  }
}

// SIGINT, SIGTERM or SIGHUP to a waiter on a fair store: it leaves the
// queue before it dies by the signal (128+N), so its ticket is not left for
// those behind it to find dead; the next waiter gets the lock at the
// release. (The lock file's queue shows it: "queued" goes with the ticket.)
void test_signalled_waiter_leaves_a_fair_queue(void** state) {
  (void)state;
  // As a suite started by nohup from a shell's background job runs: the
  // signals sent below must reach ipclock all the same (Spawn()).
  struct sigaction ignore = {}, old_int, old_hup;
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGHUP, &ignore, &old_hup);
  const std::string flock = FreshStore() + "?fair=true";
  const std::string posix = absl::StrCat("posix-semaphore:?fair=true&prefix=ipclock-sigwait-",
                                         getpid());
  for (const std::string& store : {flock, posix}) {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
      pid_t holder = StartCliHolder({"run", "--store", store, "--key", "k"});
      const std::string next = ScratchFile("next");
      pid_t waiter = Spawn(WithCli({"run", "--store", store, "--key", "k", "--", "true"}));
      // In the queue: listed as waiting (flock), or asleep (both).
      if (store == flock) AwaitListed(store, "\"queued\":1");
      AwaitWaiting(waiter);
      kill(waiter, sig);
      assert_int_equal(WaitChild(waiter, 10), 128 + sig);
      if (store == flock) {
        CliResult listed = RunCli({"list", "--json", "--store", store, "--key", "k"});
        ExpectLacks(listed.out, "\"queued\"", "a ticket after the waiter left");
      }
      pid_t later = Spawn(WithCli({"run", "--store", store, "--key", "k", "--", "sh", "-c",
                                   absl::StrCat(": > '", next, "'")}));
      AwaitWaiting(later);
      StopHolder(holder);
      assert_int_equal(WaitChild(later, 10), 0);
      assert_true(FileExists(next));
    }
  }
  ExpectCode(RunCli({"run", "-n", "--store", posix, "--key", "k", "--", "true"}), 0,
             "free at the end");
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
}

// -o is accepted; the lock is never inherited, so killing ipclock frees it
// even while the command runs on (flock(1) without -o would not).
// As under flock(1): COMMAND inherits the lock's descriptor, and keeps the
// lock once ipclock alone died; with -o it does not (and is killed with
// ipclock: tests/cli_kill_alone_test.cc).
void test_command_inherits_lock_unless_o(void** state) {
  (void)state;
  const std::string store = FreshStore();
  ExpectCode(RunCli({"run", "-o", "--store", store, "--key", "k", "--", "true"}), 0, "-o");
  pid_t holder = StartCliHolder({"run", "--store", store, "--key", "k"});
  kill(holder, SIGKILL);  // ipclock only; its command keeps running
  ExpectCode(RunCli({"run", "-n", "--store", store, "--key", "k", "--", "true"}), 1,
             "held by COMMAND once ipclock died");
  StopHolder(holder, SIGKILL);
  holder = StartCliHolder({"run", "-o", "--store", store, "--key", "k"});
  kill(holder, SIGKILL);
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "-w", "5", "--", "true"}), 0,
             "free once ipclock died (-o)");
  StopHolder(holder, SIGKILL);
}

// --- Errors ------------------------------------------------------------------------

void test_usage_errors(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"frobnicate"},
      {"run"},
      {"run", "--key", "k"},
      {"run", "--", "true"},
      {"run", "--key", "k", "--file", "/tmp/x", "--", "true"},
      {"run", "--file", "/tmp/x", "--store", store, "--", "true"},
      {"run", "--key", "k", "--bogus", "--", "true"},
      {"run", "--key", "k", "-Z", "--", "true"},
      {"run", "--key", "k", "-w", "soon", "--", "true"},
      {"run", "--key", "k", "-w", "-1", "--", "true"},
      {"run", "--key", "k", "-E", "256", "--", "true"},
      {"run", "--key", "k", "--permits", "0", "--", "true"},
      {"run", "--key", "k", "-c", "true", "--", "true"},
      {"run", "--key", "", "--", "true"},
      {"run", "--key"},
  };
  for (const auto& args : bad) {
    CliResult r = RunCli(args);
    if (r.code != 64 || r.err.empty()) {
      std::string shown;
      for (const auto& a : args) absl::StrAppend(&shown, " ", a);
      fail_msg("ipclock%s: exit %d, stderr '%s'; expected 64 and a message", shown.c_str(),
               r.code, r.err.c_str());
    }
  }
  CliResult help = RunCli({"run", "--help"});
  ExpectCode(help, 0, "run --help");
  ExpectContains(help.out, "Exit status", "run --help has the exit table");
  ExpectContains(help.out, "127", "run --help has the exit table");
  ExpectCode(RunCli({"--help"}), 0, "--help");
  CliResult version = RunCli({"--version"});
  ExpectCode(version, 0, "--version");
  ExpectContains(version.out, "ipclock ", "--version");
}

void test_bad_dsn(void** state) {
  (void)state;
  CliResult r = RunCli({"run", "--store", "nosuch://x", "--key", "k", "--", "true"});
  ExpectCode(r, 64, "unknown scheme");
  ExpectContains(r.err, "nosuch://x", "names the DSN");
  r = RunCli({"run", "--store", "flock://host/dir", "--key", "k", "--", "true"});
  ExpectCode(r, 64, "flock with a host");
  ExpectContains(r.err, "flock://host/dir", "names the DSN");
}

void test_unsafe_lock_dir(void** state) {
  (void)state;
  const std::string open_dir = MakeTempDir() + "/open";
  assert_int_equal(mkdir(open_dir.c_str(), 0700), 0);
  assert_int_equal(chmod(open_dir.c_str(), 0777), 0);  // no sticky bit
  const std::string ran = ScratchFile("ran");
  CliResult r = RunCli({"run", "--store", "flock://" + open_dir, "--key", "k", "--",
                        "touch", ran});
  ExpectCode(r, 77, "world-writable lock dir");
  ExpectContains(r.err, "world-writable", "says why");
  assert_false(FileExists(ran));
}

void test_permits(void** state) {
  (void)state;
  CliResult r = RunCli({"run", "--store", FreshStore(), "--key", "k", "--permits", "2",
                        "--", "true"});
  ExpectCode(r, 64, "--permits on flock");
  ExpectContains(r.err, "counting", "says a counting store is needed");
  ExpectCode(RunCli({"run", "--store", "in-memory", "--key", "k", "--permits", "2", "--",
                     "true"}),
             0, "--permits on in-memory");
}

}  // namespace
}  // namespace ipclock_test

int main(void) {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exit_status_passes_through),
      cmocka_unit_test(test_signal_death_is_128_plus_n),
      cmocka_unit_test(test_missing_command),
      cmocka_unit_test(test_shell_command),
      cmocka_unit_test(test_nonblock_conflict),
      cmocka_unit_test(test_wait_gives_up),
      cmocka_unit_test(test_waiter_acquires_when_holder_exits),
      cmocka_unit_test(test_runs_never_overlap),
      cmocka_unit_test(test_a_contended_run_tries_once_then_blocks),
      cmocka_unit_test(test_a_contended_run_on_semaphores_tries_once),
      cmocka_unit_test(test_shared_holders_coexist),
      cmocka_unit_test(test_key_orders_do_not_deadlock),
      cmocka_unit_test(test_environment),
      cmocka_unit_test(test_command_killed_by_a_signal_is_told),
      cmocka_unit_test(test_verbose),
      cmocka_unit_test(test_sigterm_reaches_command_before_release),
      cmocka_unit_test(test_command_inherits_lock_unless_o),
      cmocka_unit_test(test_signalled_waiter_leaves_a_fair_queue),
      cmocka_unit_test(test_usage_errors),
      cmocka_unit_test(test_bad_dsn),
      cmocka_unit_test(test_unsafe_lock_dir),
      cmocka_unit_test(test_permits),
      cmocka_unit_test(test_exit_status_classes),
      cmocka_unit_test(test_wait_covers_a_server_that_is_down),
      cmocka_unit_test(test_wait_covers_a_postgres_server_that_is_down),
      cmocka_unit_test(test_no_wait_option_waits_out_a_restart),
      cmocka_unit_test(test_control_bytes_are_escaped),
      cmocka_unit_test(test_list_escapes_process_names),
      cmocka_unit_test(test_utf8_names_shown_as_they_are),
      cmocka_unit_test(test_process_group_follows_the_terminal),
      cmocka_unit_test(test_file_refuses_a_fifo),
      cmocka_unit_test(test_flock1_holds_ipclock_waits),
      cmocka_unit_test(test_ipclock_holds_flock1_waits),
      cmocka_unit_test(test_flock1_shared_locks),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
