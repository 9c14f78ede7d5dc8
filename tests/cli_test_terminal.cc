// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// End-to-end tests of `ipclock run`, run by cli_test.cc's table: the
// exit-status table, control bytes kept from the terminal, the command's
// process group and the terminal, files that are not regular, and util-linux
// flock(1) on the same files.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

#define REQUIRE_FLOCK1()                                                  \
  do {                                                                    \
    if (FindInPath("flock").empty()) {                                    \
      print_message("skipped: flock(1) (util-linux) is not installed\n"); \
      skip();                                                             \
    }                                                                     \
  } while (0)
// --- The exit-status table (man page, EXIT STATUS) ---------------------------

// One class of code for each class of failure, whatever the option or store
// that meets it: asking a store for what it cannot do is a usage error.
void test_exit_status_classes(void** state) {
  (void)state;
  const std::string store = FreshStore();
  // 64: -s on a store without shared locks, like --permits on one that does
  // not count.
  const std::string shm = absl::StrCat("shm://", UniqueShmName("classes"));
  CliResult r = RunCli({"run", "--store", shm, "--key", "k", "-s", "--", "true"});
  ExpectCode(r, 64, "-s on shm");
  ExpectContains(r.err, "shared", "says shared locks are missing");
  ExpectCode(RunCli({"run", "--store", "semaphore", "--key", UniqueResource("classes"), "-s",
                     "--", "true"}),
             64, "-s on semaphore");
  ExpectCode(RunCli({"run", "--store", store, "--key", "k", "--permits", "3", "--", "true"}),
             64, "--permits on flock");
  ExpectCode(RunCli({"run", "--store", shm, "--key", "k", "--permits", "3", "--", "true"}), 64,
             "--permits on shm");
  // 64: a resource name the store cannot take.
  ExpectCode(RunCli({"run", "--store", store, "--key", std::string(5000, 'x'), "--", "true"}),
             64, "a name too long");
  // 69: a server that is down, tried once.
  r = RunCli({"run", "--store", "redis://127.0.0.1:1", "--key", "k", "-n", "--", "true"});
  ExpectCode(r, 69, "a Redis server that is down");
  // 64: a lock dir that is a regular file, a --file that is a FIFO or a
  // symbolic link: a file of the wrong type, whatever the type.
  const std::string file = ScratchFile("not-a-dir");
  assert_true(WriteFile(file, "x"));
  r = RunCli({"run", "--store", absl::StrCat("flock://", file), "--key", "k", "--", "true"});
  ExpectCode(r, 64, "a lock dir that is a file");
  const std::string fifo = ScratchFile("fifo");
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  ExpectCode(RunCli({"run", "--file", fifo, "--", "true"}), 64, "--file on a FIFO");
  const std::string link = ScratchFile("link");
  assert_int_equal(symlink(file.c_str(), link.c_str()), 0);
  ExpectCode(RunCli({"run", "--file", link, "--", "true"}), 64, "--file on a symbolic link");
  // 71: any other store or system error: a --file in a dir that does not
  // exist (test_control_bytes_escaped also runs it).
  ExpectCode(RunCli({"run", "--file", ScratchFile("none") + "/f", "--", "true"}), 71,
             "--file in a missing dir");
  // 77: an unsafe lock dir is test_unsafe_lock_dir's; 79: cli_watch_test's.
}

// -w covers a store that cannot be reached yet: ipclock tries again, with a
// backoff, until the wait runs out; -n and -w 0 try once.
void test_wait_covers_a_server_that_is_down(void** state) {
  (void)state;
  OwnRedis& redis = OwnRedis::Get();
  redis.Stop();
  const std::string dsn = redis.dsn();  // nothing listens there now
  CliResult r = RunCli({"run", "--store", dsn, "--key", "k", "-n", "--", "true"});
  ExpectCode(r, 69, "-n against a server that is down");
  r = RunCli({"run", "--store", dsn, "--key", "k", "-w", "0.6", "--", "true"});
  ExpectCode(r, 69, "-w 0.6 against a server that is down");
  ExpectContains(r.err, "trying again until the wait (-w) runs out", "says it waits");
  print_message("-w 0.6 against a server that is down gave up after %.3f s\n", r.seconds);
  if (r.seconds < 0.55) fail_msg("gave up after %.3f s, before -w ran out", r.seconds);

  // Started late: the run waits for it, then runs COMMAND.
  const std::string ran = ScratchFile("ran");
  SpawnOptions options;
  options.stderr_path = ScratchFile("err");
  const pid_t run = Spawn(WithCli({"run", "--store", dsn, "--key", "late", "-w", "60", "--",
                                   "touch", ran}),
                          options);
  usleep(1500 * 1000);
  assert_false(FileExists(ran));
  redis.Start();
  assert_int_equal(WaitChild(run, 60), 0);
  assert_true(FileExists(ran));
  ExpectContains(ReadFileOrEmpty(options.stderr_path), "trying again", "said it waited");
}

// Without -w, a run that found the store answering waits out a server that
// goes away while it waits behind a holder: the configuration was right.
// (A store that never answered ends the run at once: the fault table.)
void WaitsOutARestart(OwnServer& server) {
  server.EnsureStarted();
  const std::string dsn = server.dsn();
  const pid_t holder = StartCliHolder({"run", "--store", dsn, "--key", "restart"});
  const std::string ran = ScratchFile("ran");
  const pid_t run =
      Spawn(WithCli({"run", "--store", dsn, "--key", "restart", "--", "touch", ran}));
  usleep(500 * 1000);  // behind the holder
  server.Stop();
  usleep(1500 * 1000);
  int wstatus = 0;
  if (waitpid(run, &wstatus, WNOHANG) == run) {
    fail_msg("%s: the waiting run ended (status %d) when its server went away", dsn.c_str(),
             wstatus);
  }
  server.Start();
  // The holder's lock went with the server: it ends (79), and the waiter,
  // connected again, gets the lock.
  StopHolder(holder);
  assert_int_equal(WaitChild(run, 60), 0);
  assert_true(FileExists(ran));
}

void test_no_wait_option_waits_out_a_restart(void** state) {
  (void)state;
  WaitsOutARestart(OwnRedis::Get());
  WaitsOutARestart(OwnPostgres::Get());
}

void test_wait_covers_a_postgres_server_that_is_down(void** state) {
  (void)state;
  OwnPostgres& pg = OwnPostgres::Get();
  pg.EnsureStarted();  // made once (initdb), then stopped
  pg.Stop();
  ExpectCode(RunCli({"run", "--store", pg.dsn(), "--key", "k", "-w", "0", "--", "true"}), 69,
             "-w 0 against a PostgreSQL server that is down");
  const std::string ran = ScratchFile("ran");
  const pid_t run = Spawn(WithCli({"run", "--store", pg.dsn(), "--key", "late", "-w", "90",
                                   "--", "touch", ran}));
  usleep(1500 * 1000);
  assert_false(FileExists(ran));
  pg.Start();
  assert_int_equal(WaitChild(run, 120), 0);
  assert_true(FileExists(ran));
}

// --- Control bytes never reach the terminal raw ---------------------------------

void ExpectNoControlBytes(const CliResult& r, const char* what) {
  for (const std::string* text : {&r.err, &r.out}) {
    for (char c : *text) {
      const unsigned char u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\n') || u == 0x7f) {
        fail_msg("%s: byte 0x%02x printed raw: %s", what, u, text->c_str());
      }
    }
  }
}

void test_control_bytes_are_escaped(void** state) {
  (void)state;
  const std::string esc = "\x1b]0;owned\x07\x1b[2J\r\x9b";
  const std::string store = FreshStore();
  const std::string unsafe = MakeTempDir() + "/open";
  assert_int_equal(mkdir(unsafe.c_str(), 0700), 0);
  assert_int_equal(chmod(unsafe.c_str(), 0777), 0);
  struct Case {
    std::vector<std::string> args;
    int code;
  };
  const std::vector<Case> cases = {
      {{"run", "--store", "flock:///x" + esc, "--key", "k", "--", "true"}, 64},
      {{"run", "--store", "flock:///x%1b%5b2J", "--key", "k", "--", "true"}, 64},
      {{"run", "--store", store, "--key", "k", "-w", esc, "--", "true"}, 64},
      {{"run", "--store", store, "--key", "k", "--ttl", esc, "--", "true"}, 64},
      {{"run", "--store", store, "--key", "k", "-E", esc, "--", "true"}, 64},
      {{"run", "--store", store, "--key", "k", "--permits", esc, "--", "true"}, 64},
      {{"run", "--store", store, "--key", "k", "--bogus" + esc, "--", "true"}, 64},
      {{"run", "--store", store, "--key", std::string(2000, '\x1b'), "--", "true"}, 64},
      {{"run", "--store", "flock://" + unsafe, "--key", "k" + esc, "--", "true"}, 77},
      {{"run", "--file", "/nonexistent" + esc + "/f", "--", "true"}, 71},
      {{"run", "--store", store, "--key", "k", "--", "no-such-command" + esc}, 127},
      {{"frob" + esc}, 64},
      {{"list", "--store", "flock:///x" + esc}, 64},
      {{"list", "--store", store, "--key", "k", "stray" + esc}, 64},
      {{"doctor", "--root", "/nonexistent" + esc}, 64},
      {{"doctor", "--user", "nobody-such" + esc}, 64},
      {{"doctor", "--store", "nosuch" + esc}, 64},
  };
  for (const Case& c : cases) {
    CliResult r = RunCli(c.args);
    std::string shown;
    for (const std::string& a : c.args) absl::StrAppend(&shown, " ", absl::CHexEscape(a));
    if (r.code != c.code) {
      fail_msg("ipclock%s: exit %d, expected %d: %s", shown.c_str(), r.code, c.code,
               absl::CHexEscape(r.err).c_str());
    }
    ExpectNoControlBytes(r, shown.c_str());
    if (r.err.empty()) fail_msg("ipclock%s: no message", shown.c_str());
  }
}

// A holder whose process name holds an escape sequence: `list` shows it
// escaped, in the table and in JSON.
void test_list_escapes_process_names(void** state) {
  (void)state;
  REQUIRE_FLOCK1();
  std::string dir;
  const std::string store = FreshStore(&dir);
  const std::string bin_dir = MakeTempDir();
  const std::string odd = bin_dir + "/fl\x1b[7mck";
  ExpectCode(RunProgram({"cp", FindInPath("flock"), odd}), 0, "copy flock(1)");
  const std::string file = absl::StrCat(dir, "/", ipclock::FlockFileName("k"));
  const std::string ready = ScratchFile("ready");
  const pid_t holder = StartHolder(
      {odd, file, "sh", "-c", absl::StrCat(": > '", ready, "'; exec sleep 60")}, ready);
  CliResult table = RunCli({"list", "--store", store});
  CliResult json = RunCli({"list", "--store", store, "--json"});
  kill(-holder, SIGKILL);
  WaitChild(holder);
  ExpectCode(table, 0, "list");
  ExpectCode(json, 0, "list --json");
  ExpectNoControlBytes(table, "list table");
  ExpectNoControlBytes(json, "list --json");
  ExpectContains(table.out, "fl\\x1b[7mck", "the table shows the name escaped");
  ExpectContains(json.out, "fl\\u001b[7mck", "JSON shows the name escaped");
}

// A name in UTF-8 is shown as it is, in `list`'s table (its columns in line:
// counted in characters, not bytes) and in `run`'s messages, where a quote
// or backslash in it is escaped so that the quotes stay its bounds.
void test_utf8_names_shown_as_they_are(void** state) {
  (void)state;
  const std::string store = FreshStore() + "?removeipc=ignore";
  const std::string name = "multi word/\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87";  // ключ
  const std::string ready = ScratchFile("ready");
  const pid_t holder = StartHolder({Cli(), "run", "--store", store, "--key", name, "--", "sh",
                                    "-c", absl::StrCat(": > '", ready, "'; exec sleep 60")},
                                   ready);
  CliResult table = RunCli({"list", "--store", store});
  CliResult busy = RunCli({"run", "-n", "--verbose", "--store", store, "--key", name, "--", "true"});
  CliResult quoted =
      RunCli({"run", "--verbose", "--store", store, "--key", "a\"b\\c", "--", "true"});
  kill(-holder, SIGKILL);
  WaitChild(holder);
  ExpectCode(table, 0, "list");
  ExpectContains(table.out, name, "the table shows the name as it is");
  // The heading's MODE and the row's mode start in the same column.
  const std::vector<std::string> lines = absl::StrSplit(table.out, '\n');
  assert_true(lines.size() >= 3);
  const size_t heading_mode = lines[1].find("MODE");
  const size_t row_mode = lines[2].find("exclusive");
  // Bytes before the mode in the row: the name's 8 two-byte letters count
  // as 4 columns, so the row is 4 bytes longer there.
  if (row_mode != heading_mode + 4) {
    fail_msg("columns out of line:\n%s\n%s", lines[1].c_str(), lines[2].c_str());
  }
  ExpectCode(busy, 1, "run -n on the held name");
  ExpectContains(busy.err, absl::StrCat("\"", name, "\""), "run names it as it is");
  ExpectCode(quoted, 0, "run on a name with a quote and a backslash");
  ExpectContains(quoted.err, "\"a\\\"b\\\\c\"", "quote and backslash escaped");
}

// --- The command's process group and the terminal --------------------------------

// Without a controlling terminal COMMAND leads a process group of its own;
// with one (script(1) gives the run a terminal) it stays in ipclock's, so
// that it can read the terminal as any foreground command can (a process
// group of its own would be a background job there, stopped by SIGTTIN).
void test_process_group_follows_the_terminal(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string show =
      "echo \"me=$$ pgrp=$(cut -d' ' -f5 /proc/$$/stat) parent=$(cut -d' ' -f5 "
      "/proc/$PPID/stat)\"";
  SpawnOptions no_tty;
  no_tty.new_session = true;
  no_tty.stdout_path = ScratchFile("out");
  const pid_t pid = Spawn(WithCli({"run", "--store", store, "--key", "k", "-c", show}), no_tty);
  assert_int_equal(WaitChild(pid), 0);
  const std::string out = ReadFileOrEmpty(no_tty.stdout_path);
  std::string me, pgrp, parent;
  for (absl::string_view word : absl::StrSplit(absl::StripAsciiWhitespace(out), ' ')) {
    if (absl::ConsumePrefix(&word, "me=")) me = std::string(word);
    if (absl::ConsumePrefix(&word, "pgrp=")) pgrp = std::string(word);
    if (absl::ConsumePrefix(&word, "parent=")) parent = std::string(word);
  }
  if (me.empty() || me != pgrp || pgrp == parent) {
    fail_msg("without a terminal COMMAND must lead its own group: %s", out.c_str());
  }

  const std::string script = FindInPath("script");
  if (script.empty()) {
    print_message("skipped the terminal half: script(1) is not installed\n");
    return;
  }
  // Through the terminal: COMMAND reads a line typed there.
  const std::string typed = ScratchFile("typed");
  assert_true(WriteFile(typed, "hello\n"));
  const std::string command = ScratchFile("command");
  assert_true(WriteFile(command, absl::StrCat("read line; echo \"got=$line\"; ", show, "\n")));
  const std::string inner =
      absl::StrCat("'", Cli(), "' run --store '", store, "' --key k -- sh '", command, "'");
  int in = open(typed.c_str(), O_RDONLY | O_CLOEXEC);
  SpawnOptions tty;
  tty.new_session = true;
  tty.stdin_fd = in;
  tty.stdout_path = ScratchFile("out");
  const pid_t term = Spawn({script, "-qec", inner, "/dev/null"}, tty);
  close(in);
  const int code = WaitChild(term, 30);
  const std::string seen = ReadFileOrEmpty(tty.stdout_path);
  if (code != 0) fail_msg("under a terminal: exit %d: %s", code, seen.c_str());
  ExpectContains(seen, "got=hello", "COMMAND read the terminal");
  me.clear();
  pgrp.clear();
  parent.clear();
  for (absl::string_view line : absl::StrSplit(seen, '\n')) {
    if (!absl::StrContains(line, "me=")) continue;
    for (absl::string_view word : absl::StrSplit(absl::StripAsciiWhitespace(line), ' ')) {
      if (absl::ConsumePrefix(&word, "pgrp=")) pgrp = std::string(word);
      if (absl::ConsumePrefix(&word, "parent=")) parent = std::string(word);
    }
  }
  if (pgrp.empty() || pgrp != parent) {
    fail_msg("under a terminal COMMAND must stay in ipclock's group: %s", seen.c_str());
  }
}

// --- Files that are not regular -------------------------------------------------

// --file on a FIFO is refused (a FIFO is no lock file), never waited on.
void test_file_refuses_a_fifo(void** state) {
  (void)state;
  const std::string fifo = MakeTempDir() + "/fifo";
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  const std::string ran = ScratchFile("ran");
  CliResult r = RunCli({"run", "--file", fifo, "--", "touch", ran}, 20);
  if (r.code == 0 || r.code == -1) fail_msg("--file FIFO: exit %d: %s", r.code, r.err.c_str());
  ExpectContains(r.err, fifo, "names the file");
  assert_false(FileExists(ran));
}

// --- util-linux flock(1) on the same file ---------------------------------------

// flock(1) holding `path` in `mode` ("-x" or "-s") with a command that
// sleeps; returns once it holds. StopHolder ends both.
pid_t StartFlock1Holder(const char* mode, const std::string& path) {
  const std::string ready = ScratchFile("ready");
  return StartHolder(
      {"flock", mode, path, "sh", "-c", absl::StrCat(": > '", ready, "'; exec sleep 60")}, ready);
}

void test_flock1_holds_ipclock_waits(void** state) {
  (void)state;
  REQUIRE_FLOCK1();
  const std::string path = MakeTempDir() + "/job.lock";
  pid_t holder = StartFlock1Holder("-x", path);
  ExpectCode(RunCli({"run", "--file", path, "-n", "--", "true"}), 1,
             "ipclock -n while flock(1) holds");
  ExpectCode(RunCli({"run", "--file", path, "-s", "-n", "--", "true"}), 1,
             "ipclock -s -n while flock(1) holds");
  StopHolder(holder);
  // flock(1)'s command holds the lock file too, and may outlive flock(1)
  // by a moment after the group's SIGTERM: wait for it rather than -n.
  ExpectCode(RunCli({"run", "--file", path, "-w", "10", "--", "true"}), 0,
             "ipclock once flock(1) and its command are gone");
}

void test_ipclock_holds_flock1_waits(void** state) {
  (void)state;
  REQUIRE_FLOCK1();
  const std::string path = MakeTempDir() + "/job.lock";
  assert_true(WriteFile(path, "payload"));
  pid_t holder = StartCliHolder({"run", "--file", path});
  ExpectCode(RunProgram({"flock", "-n", path, "true"}), 1, "flock -n while ipclock holds");
  ExpectCode(RunProgram({"flock", "-s", "-n", path, "true"}), 1,
             "flock -s -n while ipclock holds");
  StopHolder(holder);
  ExpectCode(RunProgram({"flock", "-n", path, "true"}), 0, "flock -n once ipclock is gone");
  // --file may name a user's own file: it is locked, never written.
  assert_string_equal(ReadFileOrEmpty(path).c_str(), "payload");
}

void test_flock1_shared_locks(void** state) {
  (void)state;
  REQUIRE_FLOCK1();
  const std::string path = MakeTempDir() + "/job.lock";
  pid_t holder = StartFlock1Holder("-s", path);
  ExpectCode(RunCli({"run", "--file", path, "-s", "-n", "--", "true"}), 0,
             "ipclock -s beside flock -s");
  ExpectCode(RunCli({"run", "--file", path, "-n", "-E", "9", "--", "true"}), 9,
             "ipclock -x beside flock -s");
  StopHolder(holder);
}

}  // namespace ipclock_test
