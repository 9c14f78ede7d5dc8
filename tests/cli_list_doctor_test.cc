// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// End-to-end tests of `ipclock list` and `ipclock doctor`, the --help of
// every command, and the man page: the real binary, real holders (`ipclock
// run` processes) on real stores, and fake system trees for doctor. The
// doctor and help tests are in cli_list_doctor_test_doctor.cc, for length.

#include <dirent.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cli_util.h"
#include "ipclock_config.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "ipclock/stores/semaphore_store.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "cli_list_doctor_test.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

std::string ListJsonUntil(std::vector<std::string> args, absl::string_view needle) {
  args.insert(args.begin(), "list");
  args.push_back("--json");
  CliResult r;
  const double give_up = NowSeconds() + 20;
  do {
    r = RunCli(args);
    ExpectCode(r, 0, "list --json");
    if (absl::StrContains(r.out, needle)) return r.out;
    usleep(20 * 1000);
  } while (NowSeconds() < give_up);
  fail_msg("list never showed \"%s\"; last output: %s", std::string(needle).c_str(),
           r.out.c_str());
  return r.out;
}

namespace {

// Minimal checks that `json` is the array `ipclock list --json` prints,
// with one object per line, and that every object has the common fields.
void ExpectListJson(const std::string& json) {
  if (!absl::StartsWith(json, "[") || !absl::EndsWith(json, "]\n")) {
    fail_msg("not a JSON array: %s", json.c_str());
  }
  for (absl::string_view field : {"\"store\":", "\"resource\":", "\"object\":", "\"mode\":",
                                  "\"pid\":", "\"command\":", "\"since\":", "\"fence\":",
                                  "\"waiters\":"}) {
    if (json != "[]\n") ExpectContains(json, field, "list --json field");
  }
}

// `ipclock list ARGS --json` exits 0 and lists nothing ("[]").
void ExpectNothingListed(std::vector<std::string> args, const char* when) {
  args.insert(args.begin(), "list");
  args.push_back("--json");
  CliResult r = RunCli(std::move(args));
  ExpectCode(r, 0, when);
  if (r.out != "[]\n") fail_msg("%s: expected [], got %s", when, r.out.c_str());
}

// A next holder after one that died in the lock: told of the death, it
// releases cleanly, and the last attachment takes the objects with it.
void LetGoCleanly(std::vector<std::string> store_and_key) {
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), store_and_key.begin(), store_and_key.end());
  args.insert(args.end(), {"--", "sh", "-c", "test \"$IPCLOCK_PREVIOUS_OWNER_DIED\" = 1"});
  ExpectCode(RunCli(std::move(args)), 0, "a next holder, told of the death");
}

// --- list --------------------------------------------------------------------------

void test_list_flock(void** state) {
  (void)state;
  std::string dir;
  const std::string store = FreshStore(&dir);
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", "list-me"});
  const std::string pid = absl::StrCat(holder);

  CliResult table = RunCli({"list", "--store", store});
  ExpectCode(table, 0, "list");
  ExpectContains(table.out, "list-me", "list shows the resource");
  ExpectContains(table.out, pid, "list shows the holder pid");
  ExpectContains(table.out, "ipclock", "list shows the holder's command");
  ExpectContains(table.out, "exclusive", "list shows the mode");
  // A lock file's mtime is only a lower bound of when a holder that reuses
  // its file took the lock (mapped writes leave mtime as it was).
  ExpectContains(table.out, "taken then or later", "list says what SINCE is");
  // --key picks one lock, and names it in full.
  CliResult one = RunCli({"list", "--store", store, "--key", "list-me", "--json"});
  ExpectCode(one, 0, "list --key");
  ExpectContains(one.out, "\"resource\":\"list-me\"", "list --key names the lock");
  ExpectNothingListed({"--store", store, "--key", "list-me-not"}, "list --key of a free lock");

  // A waiter shows up as one, once it has queued in the kernel.
  SpawnOptions quiet;
  quiet.new_process_group = true;
  const pid_t waiter = Spawn(WithCli({"run", "--store", store, "--key", "list-me", "-w",
                                      "60", "--", "true"}),
                             quiet);
  const std::string json = ListJsonUntil({"--store", store}, "\"waiters\":1");
  ExpectListJson(json);
  ExpectContains(json, "\"resource\":\"list-me\"", "json resource");
  ExpectContains(json, absl::StrCat("\"pid\":", pid), "json pid");
  ExpectContains(json, "\"command\":\"ipclock\"", "json command");
  ExpectContains(json, "\"mode\":\"exclusive\"", "json mode");
  // The holder record was written at acquisition: fence 1, and a time.
  ExpectContains(json, "\"fence\":1", "json fence");
  ExpectContains(json, "\"since\":\"", "json since");
  ExpectContains(json, "\"held_mark\":\"1\"", "json held mark");
  StopHolder(waiter, SIGKILL);
  StopHolder(holder);

  CliResult after = RunCli({"list", "--store", store});
  ExpectCode(after, 0, "list after release");
  ExpectContains(after.out, "No locks held", "nothing held after release");
  ExpectLacks(after.out, "list-me", "released lock is not listed");
  ExpectNothingListed({"--store", store}, "list --json after release");
}

// Waiters of a fair=true flock store queue in the lock file, and only the
// first of them waits in flock(2): the list counts the others from the
// queue, and names them (pid and mode) from its entries.
void test_list_flock_fair_queue(void** state) {
  (void)state;
  const std::string store = FreshStore() + "?fair=true";
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", "queue"});
  SpawnOptions quiet;
  quiet.new_process_group = true;
  std::vector<pid_t> waiters;
  for (const char* mode : {"-x", "-s", "-x"}) {
    waiters.push_back(Spawn(WithCli({"run", mode, "--store", store, "--key", "queue", "-w",
                                     "60", "--", "true"}),
                            quiet));
  }
  std::string json = ListJsonUntil({"--store", store}, "\"waiters\":3");
  ExpectListJson(json);
  ExpectContains(json, "\"queued\":3", "json queued");
  // Each waiter writes its entry just after it took its ticket.
  for (size_t i = 0; i < waiters.size(); ++i) {
    const std::string named =
        absl::StrCat("{\"pid\":", waiters[i], ",\"command\":\"ipclock\",\"unit\":\"\",\"mode\":\"",
                     i == 1 ? "shared" : "exclusive", "\",\"since\":null");
    json = ListJsonUntil({"--store", store}, named);
  }
  CliResult table = RunCli({"list", "--store", store});
  for (pid_t waiter : waiters) ExpectContains(table.out, absl::StrCat(waiter), "waiter named");
  for (pid_t waiter : waiters) StopHolder(waiter, SIGKILL);
  StopHolder(holder);
}

// Shared holders, of a resource whose file name keeps only part of it
// (Symfony's naming: "sf.multi-word-.<hash>.lock"): the list names the
// resource as it is, from the file (shared holders write no record).
void test_list_flock_shared_holders(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string resource = "multi word/ключ";
  const pid_t a = StartCliHolder({"run", "-s", "--store", store, "--key", resource});
  const pid_t b = StartCliHolder({"run", "-s", "--store", store, "--key", resource});
  CliResult r = RunCli({"list", "--store", store, "--json"});
  ExpectCode(r, 0, "list --json");
  ExpectListJson(r.out);
  ExpectContains(r.out, absl::StrCat("\"pid\":", a), "first shared holder");
  ExpectContains(r.out, absl::StrCat("\"pid\":", b), "second shared holder");
  ExpectContains(r.out, "\"mode\":\"shared\"", "shared mode");
  ExpectContains(r.out, "\"resource\":\"multi word/ключ\"", "the resource, not the file's part");
  ExpectContains(r.out, "\"object\":\"sf.multi-word-.", "the file");
  StopHolder(a);
  StopHolder(b);
}

void test_list_missing_dir_is_empty(void** state) {
  (void)state;
  std::string dir;
  FreshStore(&dir);
  const std::string missing = absl::StrCat(dir, "/not-made-yet");
  CliResult r = RunCli({"list", "--store", absl::StrCat("flock://", missing)});
  ExpectCode(r, 0, "list of a dir that does not exist");
  ExpectContains(r.out, "No locks held", "nothing held");
  struct stat st;
  if (stat(missing.c_str(), &st) == 0) fail_msg("list created %s", missing.c_str());
}

void test_list_shm(void** state) {
  (void)state;
  const std::string store = absl::StrCat("shm://", UniqueShmName("list"));
  // The segment does not exist yet: nothing held, nothing created.
  ExpectNothingListed({"--store", store}, "list before any lock");

  // Quotes, a backslash and a tab, which the JSON output must escape.
  const pid_t holder =
      StartCliHolder({"run", "--store", store, "--key", "shm-\"res\"\\\t"});
  CliResult r = RunCli({"list", "--store", store, "--json"});
  ExpectCode(r, 0, "list --json");
  ExpectListJson(r.out);
  ExpectContains(r.out, "\"resource\":\"shm-\\\"res\\\"\\\\\\t\"", "json resource");
  ExpectContains(r.out, absl::StrCat("\"pid\":", holder), "json pid");
  ExpectContains(r.out, "\"mode\":\"exclusive\"", "json mode");
  ExpectContains(r.out, "\"refcount\":1", "json refcount");
  ExpectContains(r.out, "\"fence\":1", "json fence");
  CliResult table = RunCli({"list", "--store", store});
  // The table escapes what a terminal would mangle, and doubles a
  // backslash so that an escape is told from the same text in a name.
  ExpectContains(table.out, "shm-\"res\"\\\\\\x09", "table resource");
  StopHolder(holder);

  // The command died of the SIGTERM inside the lock: its slot keeps the
  // death for the next holder to be told of, and the list says so.
  CliResult died = RunCli({"list", "--store", store, "--json"});
  ExpectCode(died, 0, "list after the holder's command was killed");
  ExpectContains(died.out, "\"mode\":\"holder died\"", "json mode after a death");
  ExpectContains(died.out, "\"refcount\":0", "json refcount after a death");
  // A next holder, told, lets go cleanly: nothing is left.
  ExpectCode(RunCli({"run", "--store", store, "--key", "shm-\"res\"\\\t", "--", "true"}), 0,
             "a next holder");
  ExpectNothingListed({"--store", store}, "list after release");
}

void test_list_semaphore(void** state) {
  (void)state;
  const std::string resource = UniqueResource("list-sem");
  const pid_t holder = StartCliHolder({"run", "--store", "semaphore", "--key", resource});
  CliResult r = RunCli({"list", "--store", "semaphore", "--key", resource, "--json"});
  ExpectCode(r, 0, "list --json");
  ExpectListJson(r.out);
  ExpectContains(r.out, absl::StrCat("\"resource\":\"", resource, "\""), "json resource");
  ExpectContains(r.out, absl::StrCat("\"pid\":", holder), "json pid (GETPID)");
  ExpectContains(r.out, "\"semval\":0", "json semval");
  ExpectContains(r.out, "\"permits\":1", "json permits");
  ExpectContains(r.out, "\"waiters\":0", "json waiters (GETNCNT)");
  ExpectContains(r.out, "\"layout\":\"ipclock\"", "json layout");
  // Without --key the set is still listed, by key only.
  CliResult all = RunCli({"list", "--store", "semaphore"});
  ExpectCode(all, 0, "list of every set");
  ExpectContains(all.out, absl::StrCat(" ", holder, " "), "unnamed set shows its pid");
  StopHolder(holder);
  // The command died of the SIGTERM inside the lock, and the set keeps the
  // death for the next holder; one that lets go cleanly removes the set.
  LetGoCleanly({"--store", "semaphore", "--key", resource});
  ExpectNothingListed({"--store", "semaphore", "--key", resource}, "list after release");
  absl::StatusOr<int32_t> key =
      ipclock::SemaphoreIpcKey(resource, ipclock::SemaphoreKeyScheme::kMd5);
  if (!key.ok() || semget(*key, 0, 0) >= 0) fail_msg("the set is left after the last holder");
}

void test_list_posix_semaphore(void** state) {
  (void)state;
  const std::string resource = UniqueResource("list-psem");
  const std::string store = absl::StrCat("posix-semaphore:?prefix=iplt", getpid());
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", resource});
  CliResult named = RunCli({"list", "--store", store, "--key", resource, "--json"});
  ExpectCode(named, 0, "list --key --json");
  ExpectListJson(named.out);
  ExpectContains(named.out, absl::StrCat("\"resource\":\"", resource, "\""), "json resource");
  ExpectContains(named.out, absl::StrCat("\"pid\":", holder), "json pid");
  ExpectContains(named.out, "\"available\":0", "json permits free");
  // The scan of /dev/shm finds it too, unnamed.
  CliResult all = RunCli({"list", "--store", store, "--json"});
  ExpectCode(all, 0, "list --json");
  ExpectContains(all.out, absl::StrCat("\"pid\":", holder), "scan finds the holder");
  ExpectContains(all.out, "\"resource\":\"\"", "scan cannot name it");
  StopHolder(holder);
  // As for the SysV set: the pair keeps the death until a next holder.
  LetGoCleanly({"--store", store, "--key", resource});
  ExpectNothingListed({"--store", store}, "list after release");
  const std::string name = ipclock::PosixSemaphoreName(resource, absl::StrCat("iplt", getpid()));
  for (const std::string& path :
       {absl::StrCat("/dev/shm", name, ".reg"), absl::StrCat("/dev/shm/sem.", name.substr(1))}) {
    if (access(path.c_str(), F_OK) == 0) fail_msg("%s is left after the last holder", path.c_str());
  }
}

// A FIFO planted under a segment's or a registry's name in /dev/shm: list
// refuses it at once instead of waiting for a writer.
void test_list_never_waits_on_fifos(void** state) {
  (void)state;
  const std::string shm = UniqueShmName("fifo");
  const std::string segment = absl::StrCat("/dev/shm/ipclock.", shm);
  const std::string prefix = absl::StrCat("iplf", getpid());
  const std::string registry =
      absl::StrCat("/dev/shm", ipclock::PosixSemaphoreName("k", prefix), ".reg");
  if (mkfifo(segment.c_str(), 0600) != 0 || mkfifo(registry.c_str(), 0600) != 0) {
    fail_msg("mkfifo in /dev/shm");
  }
  CliResult a = RunCli({"list", "--store", absl::StrCat("shm://", shm)}, 20);
  CliResult b = RunCli({"list", "--store", absl::StrCat("posix-semaphore:?prefix=", prefix),
                        "--key", "k"},
                       20);
  unlink(segment.c_str());
  unlink(registry.c_str());
  ExpectCode(a, 64, "list of a FIFO segment");
  ExpectContains(a.err, "not a regular file", "says why");
  ExpectCode(b, 64, "list of a FIFO registry");
  ExpectContains(b.err, "not a regular file", "says why");
}

void test_list_usage_errors(void** state) {
  (void)state;
  const std::string store = FreshStore();
  ExpectCode(RunCli({"list", "--bogus"}), 64, "unknown option");
  ExpectCode(RunCli({"list", "--store"}), 64, "missing argument");
  ExpectCode(RunCli({"list", "--store", store, "extra"}), 64, "stray argument");
  ExpectCode(RunCli({"list", "--store", "in-memory"}), 64, "in-memory store");
  // A store that cannot be listed is the same class of error wherever it is.
  if (IPCLOCK_HAVE_REDIS) {
    ExpectCode(RunCli({"list", "--store", "redis://127.0.0.1:1"}), 64, "remote store");
  } else {
    ExpectCode(RunCli({"list", "--store", "redis://127.0.0.1:1"}), 69, "store not built");
  }
  ExpectCode(RunCli({"list", "--store", "flock://host/dir"}), 64, "bad DSN");
  CliResult r = RunCli({"list", "--frob"});
  ExpectContains(r.err, "--frob", "names the bad option");
  ExpectContains(r.err, "ipclock list --help", "points at help");
}


}  // namespace
}  // namespace ipclock_test

int main(void) {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_flock),
      cmocka_unit_test(test_list_flock_fair_queue),
      cmocka_unit_test(test_list_flock_shared_holders),
      cmocka_unit_test(test_list_missing_dir_is_empty),
      cmocka_unit_test(test_list_shm),
      cmocka_unit_test(test_list_semaphore),
      cmocka_unit_test(test_list_posix_semaphore),
      cmocka_unit_test(test_list_never_waits_on_fifos),
      cmocka_unit_test(test_list_usage_errors),
      cmocka_unit_test(test_list_metrics_one_series_per_semaphore_lock),
      cmocka_unit_test(test_list_metrics_six_stores_and_a_failure),
      cmocka_unit_test(test_list_metrics_example_unit),
      cmocka_unit_test(test_list_metrics_usage),
      cmocka_unit_test(test_list_semaphore_slots),
      cmocka_unit_test(test_list_semaphore_dead_slot),
      cmocka_unit_test(test_list_semaphore_sysv_set),
      cmocka_unit_test(test_list_semaphore_usage),
      cmocka_unit_test(test_doctor_removeipc),
      cmocka_unit_test(test_doctor_unsafe_and_cleaned_dirs),
      cmocka_unit_test(test_doctor_usage_errors),
      cmocka_unit_test(test_doctor_never_waits_on_fifos),
      cmocka_unit_test(test_doctor_checks_every_dir_above_the_lock_dir),
      cmocka_unit_test(test_cli_uses_public_headers_only),
      cmocka_unit_test(test_help_lists_every_option),
      cmocka_unit_test(test_man_page_covers_every_option),
      cmocka_unit_test(test_help_names_the_stores_of_this_build),
      cmocka_unit_test(test_exit_statuses_in_help_and_man_page),
      cmocka_unit_test(test_man_page_renders_cleanly),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
