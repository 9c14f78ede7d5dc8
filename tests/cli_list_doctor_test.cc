// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// End-to-end tests of `ipclock list` and `ipclock doctor`, the --help of
// every command, and the man page: the real binary, real holders (`ipclock
// run` processes) on real stores, and fake system trees for doctor.

#include <dirent.h>
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
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

void ExpectLacks(const std::string& text, absl::string_view needle, const char* what) {
  if (absl::StrContains(text, needle)) {
    fail_msg("%s: \"%s\" found in: %s", what, std::string(needle).c_str(), text.c_str());
  }
}

// Runs `ipclock list ARGS --json` until its output contains `needle`, for
// what a holder or waiter sets up after it started (a waiter queues in the
// kernel a moment after it starts). Returns the last output.
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
  CliResult other = RunCli({"list", "--store", store, "--key", "list-me-not", "--json"});
  ExpectCode(other, 0, "list --key of a free lock");
  if (other.out != "[]\n") fail_msg("expected [], got %s", other.out.c_str());

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
  CliResult after_json = RunCli({"list", "--store", store, "--json"});
  ExpectCode(after_json, 0, "list --json after release");
  if (after_json.out != "[]\n") fail_msg("expected [], got %s", after_json.out.c_str());
}

// Waiters of a fair=true flock store queue in the lock file, and only the
// first of them waits in flock(2): the list counts the others from the
// queue.
void test_list_flock_fair_queue(void** state) {
  (void)state;
  const std::string store = FreshStore() + "?fair=true";
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", "queue"});
  SpawnOptions quiet;
  quiet.new_process_group = true;
  std::vector<pid_t> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(Spawn(WithCli({"run", "--store", store, "--key", "queue", "-w", "60",
                                     "--", "true"}),
                            quiet));
  }
  const std::string json = ListJsonUntil({"--store", store}, "\"waiters\":3");
  ExpectListJson(json);
  ExpectContains(json, "\"queued\":3", "json queued");
  for (pid_t waiter : waiters) StopHolder(waiter, SIGKILL);
  StopHolder(holder);
}

void test_list_flock_shared_holders(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const pid_t a = StartCliHolder({"run", "-s", "--store", store, "--key", "both"});
  const pid_t b = StartCliHolder({"run", "-s", "--store", store, "--key", "both"});
  CliResult r = RunCli({"list", "--store", store, "--json"});
  ExpectCode(r, 0, "list --json");
  ExpectListJson(r.out);
  ExpectContains(r.out, absl::StrCat("\"pid\":", a), "first shared holder");
  ExpectContains(r.out, absl::StrCat("\"pid\":", b), "second shared holder");
  ExpectContains(r.out, "\"mode\":\"shared\"", "shared mode");
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
  CliResult before = RunCli({"list", "--store", store, "--json"});
  ExpectCode(before, 0, "list before any lock");
  if (before.out != "[]\n") fail_msg("expected [], got %s", before.out.c_str());

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
  // The table C-escapes what a terminal would mangle.
  ExpectContains(table.out, "shm-\\\"res\\\"\\\\\\t", "table resource");
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
  CliResult after = RunCli({"list", "--store", store, "--json"});
  ExpectCode(after, 0, "list after release");
  if (after.out != "[]\n") fail_msg("expected [] after release, got %s", after.out.c_str());
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

  CliResult after = RunCli({"list", "--store", "semaphore", "--key", resource, "--json"});
  ExpectCode(after, 0, "list after release");
  if (after.out != "[]\n") fail_msg("expected [] after release, got %s", after.out.c_str());
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

  CliResult after = RunCli({"list", "--store", store, "--json"});
  ExpectCode(after, 0, "list after release");
  if (after.out != "[]\n") fail_msg("expected [] after release, got %s", after.out.c_str());
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

// --- doctor ------------------------------------------------------------------------

// A uid above SYS_UID_MAX whose lock dirs this process can make "owned by
// it or root": 1000 when we are root (or 1000), else our own.
std::string DoctorUser() {
  const uid_t me = geteuid();
  if (me == 0 || me == 1000) return "1000";
  return me > 999 ? absl::StrCat(me) : "";
}

// A system tree with etc/passwd naming the user "alice".
std::string MakeTree(const std::string& uid) {
  const std::string root = MakeTempDir();
  for (const char* d : {"/etc", "/etc/systemd", "/etc/systemd/logind.conf.d", "/srv"}) {
    if (mkdir(absl::StrCat(root, d).c_str(), 0755) != 0) fail_msg("mkdir %s", d);
  }
  if (!WriteFile(absl::StrCat(root, "/etc/passwd"),
                 absl::StrCat("root:x:0:0::/root:/bin/sh\nalice:x:", uid, ":", uid,
                              "::/home/alice:/bin/sh\n"))) {
    fail_msg("write passwd");
  }
  return root;
}

void MakeDir(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), mode) != 0 || chmod(path.c_str(), mode) != 0) {
    fail_msg("mkdir %s", path.c_str());
  }
}

void test_doctor_removeipc(void** state) {
  (void)state;
  const std::string uid = DoctorUser();
  if (uid.empty()) skip();
  const std::string root = MakeTree(uid);
  MakeDir(absl::StrCat(root, "/srv/locks"), 0700);
  const std::vector<std::string> plain = {"doctor", "--root", root, "--user", uid};
  const std::vector<std::string> with_dir = {"doctor", "--root", root, "--user", uid,
                                             "--store", "flock:///srv/locks"};

  // No logind.conf at all: systemd's default, RemoveIPC=yes.
  CliResult r = RunCli(plain);
  ExpectCode(r, 1, "no config");
  ExpectContains(r.out, "[risk] removeipc", "RemoveIPC risk by default");
  ExpectContains(r.out, "RemoveIPC=no", "the fix names the setting");
  ExpectContains(r.out, "logind.conf.d", "the fix names the drop-in dir");
  // RemoveIPC cannot touch lock files outside /dev/shm: for a flock store
  // named on the command line it is worth knowing, not a risk.
  r = RunCli(with_dir);
  ExpectCode(r, 0, "no config, safe dir");
  ExpectContains(r.out, "[info] removeipc", "RemoveIPC noted for a flock store");

  // An explicit RemoveIPC=yes.
  WriteFile(absl::StrCat(root, "/etc/systemd/logind.conf"), "[Login]\nRemoveIPC=yes\n");
  r = RunCli(plain);
  ExpectCode(r, 1, "RemoveIPC=yes");
  ExpectContains(r.out, "[risk] removeipc", "RemoveIPC=yes is a risk");
  ExpectContains(r.out, "logind.conf:2", "names the line that decided");

  // The drop-in turns it off: nothing else in this tree is a risk.
  WriteFile(absl::StrCat(root, "/etc/systemd/logind.conf.d/ipclock.conf"),
            "[Login]\nRemoveIPC=no\n");
  r = RunCli(plain);
  ExpectCode(r, 0, "RemoveIPC=no");
  ExpectContains(r.out, "[ok] removeipc", "RemoveIPC=no is fine");
  ExpectLacks(r.out, "[risk]", "no risk at all");
  r = RunCli(with_dir);
  ExpectCode(r, 0, "RemoveIPC=no, safe dir");
  ExpectContains(r.out, "[ok] lock-dir-permissions /srv/locks", "safe dir");
  ExpectContains(r.out, "[ok] lock-dir-lifetime /srv/locks", "lasting dir");

  // By name, from the tree's passwd.
  r = RunCli({"doctor", "--root", root, "--user", "alice"});
  ExpectCode(r, 0, "--user alice");
  ExpectContains(r.out, absl::StrCat("uid ", uid, " (alice)"), "resolves the name");

  r = RunCli({"doctor", "--root", root, "--user", uid, "--json"});
  ExpectCode(r, 0, "--json");
  for (const char* field :
       {"\"at_risk\":false", "\"risks\":0", "\"findings\":[", "\"check\":\"removeipc\"",
        "\"level\":\"ok\"", "\"advice\":", "\"uid\":"}) {
    ExpectContains(r.out, field, "doctor --json field");
  }
}

void test_doctor_unsafe_and_cleaned_dirs(void** state) {
  (void)state;
  const std::string uid = DoctorUser();
  if (uid.empty()) skip();
  const std::string root = MakeTree(uid);
  WriteFile(absl::StrCat(root, "/etc/systemd/logind.conf.d/ipclock.conf"),
            "[Login]\nRemoveIPC=no\n");
  MakeDir(absl::StrCat(root, "/srv/open"), 0777);
  CliResult r =
      RunCli({"doctor", "--root", root, "--user", uid, "--store", "flock:///srv/open"});
  ExpectCode(r, 1, "world-writable dir");
  ExpectContains(r.out, "[risk] lock-dir-permissions /srv/open", "unsafe dir reported");
  ExpectContains(r.out, "world-writable", "says why");
  ExpectContains(r.out, "chmod", "says what to change");

  // Sticky is fine.
  chmod(absl::StrCat(root, "/srv/open").c_str(), 01777);
  ExpectCode(RunCli({"doctor", "--root", root, "--user", uid, "--store", "flock:///srv/open"}),
             0, "sticky dir");

  // A dir the tmp cleaner may empty, and the runtime dir logout removes.
  r = RunCli({"doctor", "--root", root, "--user", uid, "--store", "flock:///tmp/locks"});
  ExpectCode(r, 1, "dir under /tmp");
  ExpectContains(r.out, "[risk] lock-dir-lifetime /tmp/locks", "tmp dir reported");
  r = RunCli({"doctor", "--root", root, "--user", uid, "--store",
              absl::StrCat("flock:///run/user/", uid, "/app")});
  ExpectCode(r, 1, "dir in the runtime dir");
  ExpectContains(r.out, "[risk] lock-dir-lifetime", "runtime dir reported");
}

void test_doctor_usage_errors(void** state) {
  (void)state;
  const std::string root = MakeTree("1000");
  ExpectCode(RunCli({"doctor", "--bogus"}), 64, "unknown option");
  ExpectCode(RunCli({"doctor", "--root"}), 64, "missing argument");
  ExpectCode(RunCli({"doctor", "--root", "relative/dir"}), 64, "relative root");
  ExpectCode(RunCli({"doctor", "--root", absl::StrCat(root, "/missing")}), 64,
             "missing root");
  ExpectCode(RunCli({"doctor", "--root", root, "--user", "nobody-such"}), 64,
             "unknown user");
  ExpectCode(RunCli({"doctor", "--root", root, "stray"}), 64, "stray argument");
  ExpectCode(RunCli({"doctor", "--root", root, "--store", "flock://host/dir"}), 64,
             "bad DSN");
}

// An untrusted tree may hold FIFOs where configuration is read: doctor must
// not wait on them (a FIFO's open blocks until a writer comes; its read, for
// ever), and reads them as absent.
void test_doctor_never_waits_on_fifos(void** state) {
  (void)state;
  const std::string uid = DoctorUser();
  if (uid.empty()) skip();
  const std::string root = MakeTree(uid);
  for (const char* d : {"/run", "/run/systemd", "/usr", "/usr/lib", "/usr/lib/systemd",
                        "/var", "/var/lib", "/var/lib/systemd", "/var/lib/systemd/linger"}) {
    if (mkdir(absl::StrCat(root, d).c_str(), 0755) != 0) fail_msg("mkdir %s", d);
  }
  // The passwd stays a file, so that the user is found.
  for (const char* f : {"/etc/systemd/logind.conf", "/etc/systemd/logind.conf.d/10-a.conf",
                        "/run/systemd/logind.conf", "/usr/lib/systemd/logind.conf",
                        "/etc/login.defs", "/var/lib/systemd/linger/alice", "/srv/locks"}) {
    if (mkfifo(absl::StrCat(root, f).c_str(), 0644) != 0) fail_msg("mkfifo %s", f);
  }
  CliResult r = RunCli({"doctor", "--root", root, "--user", "alice", "--store",
                        "flock:///srv/locks"},
                       20);
  // A FIFO where the lock dir should be is a risk; the rest reads as absent.
  ExpectCode(r, 1, "doctor over FIFOs");
  ExpectContains(r.out, "[risk] lock-dir-permissions /srv/locks", "the FIFO lock dir");
  ExpectContains(r.out, "not a directory", "says the lock dir is no dir");
  ExpectContains(r.out, "removeipc", "the RemoveIPC check ran");
  // And a FIFO passwd: the user cannot be found, and that is said at once.
  if (unlink(absl::StrCat(root, "/etc/passwd").c_str()) != 0 ||
      mkfifo(absl::StrCat(root, "/etc/passwd").c_str(), 0644) != 0) {
    fail_msg("mkfifo passwd");
  }
  r = RunCli({"doctor", "--root", root, "--user", "alice"}, 20);
  ExpectCode(r, 64, "doctor with a FIFO passwd");
  ExpectContains(r.err, "unknown user", "says the user is unknown");
}

// A lock dir is only as safe as every dir above it: whoever can write one
// of them can rename the lock dir away and make another (the rule of
// OpenSSH's StrictModes); a sticky dir keeps others from renaming what is
// not theirs.
void test_doctor_checks_every_dir_above_the_lock_dir(void** state) {
  (void)state;
  const std::string uid = DoctorUser();
  if (uid.empty() || geteuid() != 0) skip();  // chown to another user needs root
  const std::string root = MakeTree(uid);
  WriteFile(absl::StrCat(root, "/etc/systemd/logind.conf.d/ipclock.conf"),
            "[Login]\nRemoveIPC=no\n");
  MakeDir(absl::StrCat(root, "/srv/app"), 0755);
  MakeDir(absl::StrCat(root, "/srv/app/locks"), 0700);
  const std::vector<std::string> args = {"doctor", "--root", root, "--user", uid,
                                         "--store", "flock:///srv/app/locks"};
  CliResult r = RunCli(args);
  ExpectCode(r, 0, "every dir above is root's");
  ExpectContains(r.out, "[ok] lock-dir-permissions /srv/app/locks", "safe");

  // Owned by another user who is not root.
  if (chown(absl::StrCat(root, "/srv").c_str(), 4242, 0) != 0) fail_msg("chown");
  r = RunCli(args);
  ExpectCode(r, 1, "an ancestor owned by another user");
  ExpectContains(r.out, "[risk] lock-dir-permissions /srv/app/locks", "reported");
  ExpectContains(r.out, "/srv above it is owned by uid 4242", "names the dir and its owner");
  if (chown(absl::StrCat(root, "/srv").c_str(), 0, 0) != 0) fail_msg("chown");

  // Writable by others, then sticky.
  if (chmod(absl::StrCat(root, "/srv/app").c_str(), 0777) != 0) fail_msg("chmod");
  r = RunCli(args);
  ExpectCode(r, 1, "an ancestor writable by all");
  ExpectContains(r.out, "/srv/app above it has mode 0777", "names the dir and its mode");
  if (chmod(absl::StrCat(root, "/srv/app").c_str(), 01777) != 0) fail_msg("chmod");
  ExpectCode(RunCli(args), 0, "a sticky ancestor");

  // A dir that does not exist yet is judged by the dirs above it.
  if (chmod(absl::StrCat(root, "/srv").c_str(), 0775) != 0) fail_msg("chmod");
  r = RunCli({"doctor", "--root", root, "--user", uid, "--store",
              "flock:///srv/app/new/locks"});
  ExpectCode(r, 1, "group-writable ancestor of a dir not made yet");
  ExpectContains(r.out, "/srv above it has mode 0775: its group", "names the group");
}

// The CLI is a program of the library like any other: it includes the
// public headers, never src/ internals or the build's config header.
void test_cli_uses_public_headers_only(void** state) {
  (void)state;
  const char* source = getenv("IPCLOCK_SOURCE_ROOT");
  if (source == nullptr) skip();
  const std::string dir = absl::StrCat(source, "/tools/ipclock");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) fail_msg("cannot read %s", dir.c_str());
  int files = 0;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (!absl::EndsWith(name, ".cc") && !absl::EndsWith(name, ".h")) continue;
    ++files;
    const std::string text = ReadFileOrEmpty(absl::StrCat(dir, "/", name));
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (!absl::StartsWith(line, "#include \"")) continue;
      for (absl::string_view internal :
           {"\"core/", "\"stores/", "\"platform/", "\"capi/", "\"ipclock_config.h\""}) {
        if (absl::StrContains(line, internal)) {
          fail_msg("tools/ipclock/%s includes an internal header: %s", name.c_str(),
                   std::string(line).c_str());
        }
      }
    }
  }
  closedir(d);
  if (files == 0) fail_msg("no source files in %s", dir.c_str());
}

// --- help and the man page ---------------------------------------------------------

struct CommandOptions {
  const char* command;
  std::vector<const char*> options;
};

const std::vector<CommandOptions>& AllOptions() {
  static const std::vector<CommandOptions> all = {
      {"run",
       {"--key", "--file", "--store", "--exclusive", "--shared", "--nonblock", "--wait",
        "--conflict-exit-code", "--permits", "--ttl", "--check-interval", "--kill-after",
        "--command", "--close", "--verbose", "--help"}},
      {"list", {"--store", "--key", "--json", "--help"}},
      {"doctor", {"--store", "--root", "--user", "--json", "--help"}},
  };
  return all;
}

void test_help_lists_every_option(void** state) {
  (void)state;
  CliResult main_help = RunCli({"--help"});
  ExpectCode(main_help, 0, "--help");
  for (const CommandOptions& c : AllOptions()) {
    ExpectContains(main_help.out, absl::StrCat("  ", c.command, " "), "main help command");
    CliResult r = RunCli({c.command, "--help"});
    ExpectCode(r, 0, c.command);
    ExpectContains(r.out, absl::StrCat("Usage: ipclock ", c.command), c.command);
    for (const char* option : c.options) ExpectContains(r.out, option, c.command);
  }
}

std::string ManPage() {
  const char* source = getenv("IPCLOCK_SOURCE_ROOT");
  return source == nullptr ? "" : absl::StrCat(source, "/doc/ipclock.1");
}

void test_man_page_covers_every_option(void** state) {
  (void)state;
  const std::string page = ManPage();
  if (page.empty()) skip();
  const std::string text = ReadFileOrEmpty(page);
  if (text.empty()) fail_msg("cannot read %s", page.c_str());
  for (const CommandOptions& c : AllOptions()) {
    ExpectContains(text, absl::StrCat(".SS ", c.command), "man page section");
    for (const char* option : c.options) {
      // roff spells each "-" of an option as "\-".
      ExpectContains(text, absl::StrReplaceAll(option, {{"-", "\\-"}}), c.command);
    }
  }
  for (absl::string_view section : {".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES",
                                    ".SH EXAMPLES"}) {
    ExpectContains(text, section, "man page section");
  }
}

// The stores named by --help are the registry's, every one this build has.
void test_help_names_the_stores_of_this_build(void** state) {
  (void)state;
  CliResult main_help = RunCli({"--help"});
  CliResult run_help = RunCli({"run", "--help"});
  CliResult doctor_help = RunCli({"doctor", "--help"});
  for (const std::string& scheme : ipclock::SupportedDsnSchemes()) {
    ExpectContains(main_help.out, scheme, "ipclock --help names the store");
    ExpectContains(run_help.out, scheme, "ipclock run --help names the store");
    ExpectContains(doctor_help.out, scheme, "ipclock doctor --help names the store");
  }
  CliResult list_help = RunCli({"list", "--help"});
  for (const ipclock::StoreInfo& info : ipclock::KnownStores()) {
    if (info.listable) ExpectContains(list_help.out, info.name, "list --help names the store");
  }
  // The unknown-store error too.
  CliResult r = RunCli({"run", "--store", "nosuch", "--key", "k", "--", "true"});
  for (const std::string& scheme : ipclock::SupportedDsnSchemes()) {
    ExpectContains(r.err, scheme, "the unknown-store error names the store");
  }
}

// The man page's exit-status table is the contract: every status ipclock
// run can give is in it and in --help, and the other commands' statuses are
// in their --help and the man page.
void test_exit_statuses_in_help_and_man_page(void** state) {
  (void)state;
  const std::string page = ManPage();
  if (page.empty()) skip();
  const std::string man = ReadFileOrEmpty(page);
  const std::string exit_section = man.substr(man.find(".SH EXIT STATUS"));
  CliResult run_help = RunCli({"run", "--help"});
  const std::string run_table = run_help.out.substr(run_help.out.find("Exit status:"));
  for (const char* status : {"1", "64", "69", "71", "77", "79", "126", "127"}) {
    ExpectContains(run_table, absl::StrCat("\n  ", status, " "), "run --help exit table");
    if (!absl::StrContains(exit_section, absl::StrCat(".TP\n", status, "\n")) &&
        !absl::StrContains(exit_section, absl::StrCat(".TP\n", status, ", ")) &&
        !absl::StrContains(exit_section, absl::StrCat(", ", status, "\n"))) {
      fail_msg("the man page's exit table lacks %s", status);
    }
  }
  ExpectContains(run_table, "128+N", "run --help exit table");
  ExpectContains(exit_section, "128+", "the man page's exit table");
  CliResult list_help = RunCli({"list", "--help"});
  CliResult doctor_help = RunCli({"doctor", "--help"});
  for (const char* status : {"64", "69", "71", "77"}) {
    ExpectContains(list_help.out, status, "list --help statuses");
  }
  for (const char* status : {"0", "1", "64", "71"}) {
    ExpectContains(doctor_help.out, absl::StrCat("\n  ", status, " "), "doctor --help statuses");
  }
  const std::string list_section = exit_section.substr(exit_section.find(".SS list"));
  for (const char* status : {"64", "69", "71", "77"}) {
    ExpectContains(list_section.substr(0, list_section.find(".SS doctor")), status,
                   "the man page's list statuses");
  }
  const std::string doctor_section = exit_section.substr(exit_section.find(".SS doctor"));
  for (const char* status : {"0", "1", "64", "71"}) {
    ExpectContains(doctor_section.substr(0, doctor_section.find(".SH")), status,
                   "the man page's doctor statuses");
  }
}

void test_man_page_renders_cleanly(void** state) {
  (void)state;
  const std::string page = ManPage();
  const std::string groff = FindInPath("groff");
  if (page.empty() || groff.empty()) skip();
  CliResult r = RunProgram({groff, "-man", "-ww", "-z", page});
  ExpectCode(r, 0, "groff");
  if (!r.err.empty()) fail_msg("groff warnings: %s", r.err.c_str());
  const std::string man = FindInPath("man");
  if (man.empty()) return;
  r = RunProgram({man, "--warnings", "-l", page});
  ExpectCode(r, 0, "man --warnings");
  if (!r.err.empty()) fail_msg("man warnings: %s", r.err.c_str());
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
