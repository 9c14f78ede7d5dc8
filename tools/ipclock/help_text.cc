// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "help_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ipclock/store_factory.h"

namespace ipclock_cli {

namespace {

std::string Schemes() {
  return absl::StrJoin(ipclock::SupportedDsnSchemes(), ", ");
}

}  // namespace

std::string MainHelp() {
  return absl::StrCat(
      "Usage: ipclock COMMAND [OPTIONS]\n"
      "\n"
      "Named locks between processes.\n"
      "\n"
      "Commands:\n"
      "  run     run a command while holding one or more locks\n"
      "\n"
      "Options:\n"
      "  -h, --help     show this help (ipclock run --help for run's)\n"
      "      --version  show the version\n"
      "\n"
      "Stores in this build: ",
      Schemes(), " (default: ", ipclock::kDefaultDsn, ").\n");
}

std::string RunHelp() {
  return absl::StrCat(
      "Usage: ipclock run (--key NAME ... | --file PATH) [OPTIONS] [--] COMMAND [ARGS...]\n"
      "       ipclock run (--key NAME ... | --file PATH) [OPTIONS] -c STRING\n"
      "\n"
      "Acquires the lock, runs COMMAND (without a shell) while holding it, and\n"
      "releases the lock once COMMAND has ended.\n"
      "\n"
      "What to lock:\n"
      "      --key NAME     a named resource in the store; repeat for several,\n"
      "                     which are taken in sorted order (so runs naming\n"
      "                     them in any order cannot deadlock) and released in\n"
      "                     reverse\n"
      "      --file PATH    flock(2) exactly PATH, as util-linux flock(1) does;\n"
      "                     created if missing, never written to\n"
      "      --store DSN    where --key locks live (default ",
      ipclock::kDefaultDsn,
      ", lock files in\n"
      "                     the default lock dir; flock:///DIR for another dir,\n"
      "                     which PHP's Symfony FlockStore on DIR shares).\n"
      "                     Stores in this build: ",
      Schemes(),
      "\n"
      "\n"
      "How to lock:\n"
      "  -x, --exclusive      an exclusive lock (the default)\n"
      "  -s, --shared         a shared lock: shared holders run together\n"
      "  -n, --nonblock       try once; if busy, exit with the conflict status\n"
      "  -w, --wait SECS      wait at most SECS (fractions allowed; 0 tries\n"
      "                       once); the default is to wait for as long as it\n"
      "                       takes\n"
      "  -E, --conflict-exit-code N\n"
      "                       exit status when the lock is busy (default 1)\n"
      "      --permits N      holders allowed at once, on counting stores\n"
      "\n"
      "What to run:\n"
      "  -c, --command STRING run STRING with /bin/sh -c\n"
      "  -o, --close          accepted for flock(1) compatibility and always in\n"
      "                       effect: COMMAND never inherits the lock's file\n"
      "                       descriptor, so the lock is held by ipclock alone.\n"
      "                       If ipclock is killed, the lock goes with it (at\n"
      "                       once on local stores, when its lease runs out on\n"
      "                       remote ones) even while COMMAND, or a daemon it\n"
      "                       started, runs on; flock(1) without -o would keep\n"
      "                       it held until they all ended.\n"
      "      --verbose        report on stderr what is acquired, how long it\n"
      "                       took, and the fencing token\n"
      "  -h, --help           show this help\n"
      "\n"
      "COMMAND runs with these variables added to its environment:\n"
      "  IPCLOCK_RESOURCE     the resource (the first, in sorted order, of\n"
      "                       several --key; the path with --file)\n"
      "  IPCLOCK_RESOURCES    every resource, one per line\n"
      "  IPCLOCK_STORE        the store, e.g. flock:///run/user/1000/ipclock\n"
      "  IPCLOCK_FENCE        the fencing token of IPCLOCK_RESOURCE's lock, a\n"
      "                       number that grows with every exclusive\n"
      "                       acquisition (stores with fencing only)\n"
      "  IPCLOCK_PREVIOUS_OWNER_DIED\n"
      "                       1 if a previous holder of any of the locks died\n"
      "                       holding it: what it guarded may be half-done\n"
      "\n"
      "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to ipclock are\n"
      "passed on to COMMAND (those the terminal sends to the whole foreground\n"
      "job reach COMMAND directly and are not sent twice); the lock is released\n"
      "only after COMMAND has ended. On stores whose locks have a lease, ipclock\n"
      "renews it every third of its length (300 s) while COMMAND runs.\n"
      "\n"
      "Exit status:\n"
      "  Status   Meaning\n"
      "  -------  ------------------------------------------------------------\n"
      "  N        COMMAND ran and exited with N\n"
      "  128+N    COMMAND was killed by signal N\n"
      "  1        the lock was busy (-n) or the wait ran out (-w); -E sets it\n"
      "  64       usage error: bad option, DSN, resource name or --permits\n"
      "           (EX_USAGE)\n"
      "  69       store unavailable: server down, or not in this build\n"
      "           (EX_UNAVAILABLE)\n"
      "  71       any other store or system error (EX_OSERR)\n"
      "  77       permission denied, e.g. an unsafe or unwritable lock dir\n"
      "           (EX_NOPERM)\n"
      "  126      COMMAND was found but could not be executed\n"
      "  127      COMMAND was not found\n"
      "Use -E with a value COMMAND never returns to tell a busy lock from\n"
      "COMMAND's own status.\n");
}

}  // namespace ipclock_cli
