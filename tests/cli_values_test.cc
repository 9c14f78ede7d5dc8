// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Values and names the CLI is given, end to end on the real binary: SECS
// in decimal and at most a year (no hex, exponent, infinity), options
// asking `list` for two formats, ETCD_LOCK_* of the caller's environment
// kept from a COMMAND on other stores, a foreign file named like a
// posix-semaphore registry left out of a listing, an etcd member whose
// name does not resolve waited for as a server that is down, ZooKeeper
// behind a bracketed IPv6 address and with many names that do not
// resolve, a table store's db_table in a schema that does not exist, and
// a file a DSN names opened once.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli_util.h"
#include "core/dsn.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "ipclock_config.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

void ExpectUsage(const std::vector<std::string>& args, absl::string_view says) {
  CliResult r = RunCli(args);
  if (r.code != 64) {
    fail_msg("%s: exit %d, expected 64; stderr: %s", absl::StrJoin(args, " ").c_str(), r.code,
             r.err.c_str());
  }
  ExpectContains(r.err, says, "says why");
}

// --- SECS --------------------------------------------------------------------------

void test_secs_are_decimal_and_bounded(void**) {
  const std::string store = FreshStore();
  const std::vector<std::string> run = {"run", "--store", store, "--key", "k"};
  const auto with = [&](std::vector<std::string> options) {
    std::vector<std::string> args = run;
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--", "true"});
    return args;
  };
  // A check interval of 1e9 s was taken, and the watch's sums overflowed:
  // a lease was no longer renewed.
  ExpectUsage(with({"--check-interval", "1e9"}), "--check-interval");
  ExpectUsage(with({"--check-interval", "1000000000"}), "at most 31622400 seconds");
  ExpectUsage(with({"--ttl", "1e308"}), "--ttl");
  ExpectUsage(with({"--ttl", "100000000000000000000000"}), "at most");
  // strtod's hex: 0x10 was 16 seconds.
  ExpectUsage(with({"--ttl", "0x10"}), "in decimal");
  ExpectUsage(with({"-w", "inf"}), "in decimal");
  ExpectUsage(with({"-w", "nan"}), "in decimal");
  ExpectUsage(with({"--kill-after", "+1"}), "in decimal");
  ExpectUsage(with({"--kill-after", " 1"}), "in decimal");
  ExpectUsage(with({"-w", "."}), "in decimal");
  ExpectUsage(with({"--check-interval", "1.2.3"}), "in decimal");
  // What the man page shows stays good, up to the year.
  ExpectCode(RunCli(with({"--ttl", "31622400", "--check-interval", ".5", "-w", "2.",
                          "--kill-after", "0.25"})),
             0, "decimal SECS");
}

// --- list ----------------------------------------------------------------------------

void test_list_formats_conflict(void**) {
  const std::string store = FreshStore();
  ExpectUsage({"list", "--store", store, "--format=openmetrics", "--json"}, "different formats");
  ExpectUsage({"list", "--store", store, "--json", "--format", "table"}, "different formats");
  ExpectUsage({"list", "--store", store, "--format=json", "--format=openmetrics"},
              "different formats");
  // The same format twice is no conflict.
  ExpectCode(RunCli({"list", "--store", store, "--json", "--format=json"}), 0, "--json twice");
}

// A file named like a registry that is none (another program's, another
// ipclock version's) is left out, said once on stderr, and the rest of the
// store is listed, in every format.
void test_list_leaves_out_a_foreign_registry(void**) {
  const std::string prefix = absl::StrCat("iplv", getpid());
  const std::string store = absl::StrCat("posix-semaphore:?prefix=", prefix);
  const std::string r = UniqueResource("values-list");
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", r});
  const std::string planted =
      absl::StrCat("/dev/shm", ipclock::PosixSemaphoreName("planted", prefix), ".reg");
  assert_true(WriteFile(planted, "not a registry at all"));
  const std::string row = absl::StrCat(
      "/dev/shm", ipclock::PosixSemaphoreName(r, prefix), ".reg");
  for (const std::vector<std::string>& format :
       std::vector<std::vector<std::string>>{{}, {"--json"}, {"--format=openmetrics"}}) {
    std::vector<std::string> args = {"list", "--store", store};
    args.insert(args.end(), format.begin(), format.end());
    CliResult listed = RunCli(args);
    ExpectCode(listed, 0, "a listing beside a foreign file");
    ExpectContains(listed.out, row, "the held lock is listed");
    ExpectContains(listed.err, planted, "names the file left out");
    ExpectContains(listed.err, "left out of the listing", "says it is left out");
    const std::vector<std::string> mentions = absl::StrSplit(listed.err, planted);
    if (mentions.size() != 2) fail_msg("the file is named %zu times:\n%s", mentions.size() - 1,
                                       listed.err.c_str());
  }
  unlink(planted.c_str());
  StopHolder(holder);
  // The holder's semaphore and registry stay for the next user: none.
  unlink(row.c_str());
  unlink(absl::StrCat("/dev/shm/sem.", ipclock::PosixSemaphoreName(r, prefix).substr(1)).c_str());
}

// --- The environment --------------------------------------------------------------

void test_forged_etcd_variables_never_reach_command(void**) {
  const std::string store = FreshStore();
  CliResult r = RunProgram({"env", "ETCD_LOCK_REV=999999", "ETCD_LOCK_KEY=forged/key", Cli(),
                            "run", "--store", store, "--key", "k", "--", "sh", "-c",
                            "echo \"${ETCD_LOCK_REV-unset} ${ETCD_LOCK_KEY-unset}\""});
  ExpectCode(r, 0, "a run on flock");
  assert_string_equal(r.out.c_str(), "unset unset\n");
}

// --- Names that do not resolve ----------------------------------------------------

// An etcd member whose name does not resolve is a server not reachable
// now: 69, and waited for under -w as a server that is down.
void test_unresolvable_etcd_member_is_transient(void**) {
  if (!IPCLOCK_HAVE_ETCD) skip();
  const std::string store = "etcd://ipclock-no-such-member.invalid:2379";
  CliResult now = RunCli({"run", "--store", store, "--key", "k", "--", "true"});
  ExpectCode(now, 69, "an etcd member that does not resolve");
  ExpectContains(now.err, "ipclock-no-such-member.invalid", "names the member");
  CliResult waited = RunCli({"run", "--store", store, "--key", "k", "-w", "1", "--", "true"});
  ExpectCode(waited, 69, "the same under -w 1");
  print_message("-w 1 ended after %.2f s\n", waited.seconds);
  if (waited.seconds < 0.9) fail_msg("-w 1 ended after %.2f s: not retried", waited.seconds);
}

// socat relaying [::1]:port to `to` (127.0.0.1:PORT); the port.
int StartIpv6Relay(const std::string& to, pid_t* pid) {
  if (access("/usr/bin/socat", X_OK) != 0) {
    SkipIf("socat is not installed", UnderCi());
  }
  const int port = 20000 + static_cast<int>(getpid() % 20000);
  SpawnOptions options;
  *pid = Spawn({"/usr/bin/socat", absl::StrCat("TCP6-LISTEN:", port, ",bind=[::1],fork,reuseaddr"),
                absl::StrCat("TCP4:", to)},
               options);
  for (int i = 0; i < 200; ++i) {
    CliResult probe = RunProgram({"socat", "-u", "/dev/null", absl::StrCat("TCP6:[::1]:", port)});
    if (probe.code == 0) return port;
    usleep(20000);
  }
  fail_msg("socat did not listen on [::1]:%d", port);
  return 0;
}

void test_zookeeper_at_a_bracketed_ipv6_address(void**) {
  if (!IPCLOCK_HAVE_ZOOKEEPER) skip();
  const char* zk = RequireEnv("IPCLOCK_TEST_ZOOKEEPER");
  absl::StatusOr<ipclock::Dsn> parsed = ipclock::Dsn::Parse(zk);
  ASSERT_OK(parsed);
  pid_t relay = -1;
  const int port = StartIpv6Relay(absl::StrCat(parsed->host(), ":", parsed->port()), &relay);
  CliResult r = RunCli({"run", "--store", absl::StrCat("zookeeper://[::1]:", port, "?secret=none"),
                        "--key", UniqueResource("v6"), "--", "true"});
  kill(relay, SIGTERM);
  WaitChild(relay);
  ExpectCode(r, 0, "zookeeper://[::1]:PORT");
}

// Many names that do not resolve are resolved at once, within
// connect_timeout: the client resolved them one after another. Each name
// is made slow to fail by search domains that do not exist either (a
// name without a dot is tried in each): about 50 ms here, so 200 names
// took 10 s one after another.
void test_zookeeper_names_resolve_within_connect_timeout(void**) {
  if (!IPCLOCK_HAVE_ZOOKEEPER) skip();
  std::vector<std::string> servers;
  for (int i = 0; i < 200; ++i) servers.push_back(absl::StrCat("ipclock-zk-", i, ":2181"));
  const std::string store =
      absl::StrCat("zookeeper://", absl::StrJoin(servers, ","), "?connect_timeout=2&secret=none");
  CliResult r = RunProgram({"env", "LOCALDOMAIN=a.invalid b.invalid c.invalid d.invalid "
                            "e.invalid f.invalid", "RES_OPTIONS=timeout:1 attempts:1", Cli(),
                            "run", "--store", store, "--key", "k", "-w", "0", "--", "true"},
                           120);
  print_message("200 names that do not resolve: exit %d after %.2f s\n", r.code, r.seconds);
  ExpectCode(r, 69, "names that do not resolve");
  ExpectContains(r.err, "could not resolve", "says so");
  // connect_timeout=2, and room for a loaded machine.
  if (r.seconds > 6) fail_msg("took %.1f s", r.seconds);
}

// Names that fail to resolve, tried again under -w: each try resolves them
// anew while lookups of the last may still run. glibc's getaddrinfo_a()
// crashed on the second batch (SIGSEGV or "double free" in most runs with
// two names); every try must end in the store's own answer.
void test_zookeeper_names_retried_never_crash(void**) {
  if (!IPCLOCK_HAVE_ZOOKEEPER) skip();
  for (const char* names : {"zk1.ipclock-no-such.invalid:2181,zk2.ipclock-no-such.invalid:2181",
                            "zk1.ipclock-no-such.invalid:2181,zk2.ipclock-no-such.invalid:2181,"
                            "zk3.ipclock-no-such.invalid:2181"}) {
    for (int run = 0; run < 2; ++run) {
      const std::string store =
          absl::StrCat("zookeeper://", names, "?connect_timeout=0.5&secret=none");
      // Without the heap perturbing that meson test sets: with it, the
      // freed memory glibc read again happened to hold what it expected.
      CliResult r = RunProgram({"env", "-u", "MALLOC_PERTURB_", Cli(), "run", "--store", store,
                                "--key", "k", "-w", "1.5", "--", "true"},
                               30);
      print_message("%s, -w 1.5: exit %d after %.2f s\n", names, r.code, r.seconds);
      ExpectCode(r, 69, "names that do not resolve, tried again");
      ExpectContains(r.err, "could not resolve", "says so");
    }
  }
}

// --- A table in a schema that does not exist ------------------------------------

void test_table_in_a_missing_schema_is_configuration(void**) {
  const std::vector<ServerDsn> tables =
      ServerDsnsInBuild({"IPCLOCK_TEST_POSTGRES_TABLE", "IPCLOCK_TEST_MYSQL_TABLE"});
  SkipWithoutServerDsns(tables);
  for (const ServerDsn& table : tables) {
    const std::string store =
        absl::StrCat(table.dsn, table.dsn.find('?') == std::string::npos ? "?" : "&",
                     "db_table=ipclock_no_such_schema.locks");
    CliResult r = RunCli({"run", "--store", store, "--key", "k", "--", "true"});
    print_message("%s: %s", table.variable, r.err.c_str());
    ExpectCode(r, 64, "db_table in a schema that does not exist");
    ExpectContains(r.err, "ipclock_no_such_schema.locks", "names the table");
  }
}

// A DSN is read once on its way to the store: a file it names (the key
// naming's secret_file) is opened once, not once to check the DSN and again
// to build the store. strace counts the opens; the server need not be up.
void test_a_dsn_is_read_once(void** state) {
  (void)state;
  if (!IPCLOCK_HAVE_REDIS) skip();
  const std::string secret = ScratchFile("secret");
  assert_true(WriteFile(secret, "0123456789abcdef0123456789abcdef\n"));
  assert_int_equal(chmod(secret.c_str(), 0600), 0);
  const std::string trace = ScratchFile("trace");
  CliResult r = RunProgram(UnderStrace(
      "openat", trace,
      WithCli({"run", "-n", "--store", absl::StrCat("redis://127.0.0.1:1?secret_file=", secret),
               "--key", "k", "--", "true"})));
  ExpectContains(r.err, "cannot connect", "the store was built and tried");
  int opens = 0;
  for (absl::string_view line : absl::StrSplit(ReadFileOrEmpty(trace), '\n')) {
    if (absl::StrContains(line, secret)) ++opens;
  }
  if (opens != 1) fail_msg("%s opened %d times, expected once", secret.c_str(), opens);
}

// What a run asks of a store that cannot do it (a shared lock, permits) is
// refused with the DSN named, for stores whose DSN is checked apart from
// their build (the table and combined stores) as for the others.
void test_what_a_store_cannot_do_names_its_dsn(void** state) {
  (void)state;
  const std::string dir = MakeTempDir();
  std::vector<std::pair<std::string, std::string>> runs = {
      {absl::StrCat("combined://?store1=flock://", dir, "&store2=flock://", dir), "--permits"},
      {absl::StrCat("flock://", dir), "--permits"}};
  if (IPCLOCK_HAVE_SQLITE) runs.push_back({absl::StrCat("sqlite://", dir, "/t.db"), "-s"});
  for (const auto& [dsn, option] : runs) {
    std::vector<std::string> args = {"run", "--store", dsn, "--key", "k"};
    if (option == "--permits") {
      args.insert(args.end(), {"--permits", "2"});
    } else {
      args.push_back(option);
    }
    args.insert(args.end(), {"--", "true"});
    CliResult r = RunCli(args);
    ExpectCode(r, 64, dsn.c_str());
    ExpectContains(r.err, absl::StrCat("bad DSN \"", dsn, "\""), "names the DSN");
  }
}

}  // namespace
}  // namespace ipclock_test

int main(void) {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_secs_are_decimal_and_bounded),
      cmocka_unit_test(test_list_formats_conflict),
      cmocka_unit_test(test_list_leaves_out_a_foreign_registry),
      cmocka_unit_test(test_forged_etcd_variables_never_reach_command),
      cmocka_unit_test(test_unresolvable_etcd_member_is_transient),
      cmocka_unit_test(test_zookeeper_at_a_bracketed_ipv6_address),
      cmocka_unit_test(test_zookeeper_names_resolve_within_connect_timeout),
      cmocka_unit_test(test_zookeeper_names_retried_never_crash),
      cmocka_unit_test(test_table_in_a_missing_schema_is_configuration),
      cmocka_unit_test(test_a_dsn_is_read_once),
      cmocka_unit_test(test_what_a_store_cannot_do_names_its_dsn),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
