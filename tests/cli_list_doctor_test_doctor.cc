// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// End-to-end tests of `ipclock doctor` on fake system trees, the --help of
// every command, and the man page, run by cli_list_doctor_test.cc's table.

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
#include "cli_list_doctor_test.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

// --- doctor ------------------------------------------------------------------------

// A uid above SYS_UID_MAX whose lock dirs this process can make "owned by
// it or root": 1000 when we are root (or 1000), else our own.
std::string DoctorUser() {
  const uid_t me = geteuid();
  if (me == 0 || me == 1000) return "1000";
  return me > 999 ? absl::StrCat(me) : "";
}

// DoctorUser(), skipping the test when there is none (a system user runs it).
std::string DoctorUserOrSkip() {
  const std::string uid = DoctorUser();
  if (uid.empty()) skip();
  return uid;
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
  const std::string uid = DoctorUserOrSkip();
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
  const std::string uid = DoctorUserOrSkip();
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
  const std::string uid = DoctorUserOrSkip();
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
        "--conflict-exit-code", "--permits", "--limit", "--weight", "--ttl", "--check-interval", "--kill-after",
        "--command", "--close", "--verbose", "--help"}},
      {"list", {"--store", "--key", "--format", "--json", "--output", "--help"}},
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

// The man page's text: skips the test outside the source tree (no
// IPCLOCK_SOURCE_ROOT), fails it if the page cannot be read.
std::string ManPageText() {
  const std::string page = ManPage();
  if (page.empty()) skip();
  const std::string text = ReadFileOrEmpty(page);
  if (text.empty()) fail_msg("cannot read %s", page.c_str());
  return text;
}

void test_man_page_covers_every_option(void** state) {
  (void)state;
  const std::string text = ManPageText();
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
  const std::string man = ManPageText();
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

}  // namespace ipclock_test
