// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "help_text.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exit_codes.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store_factory.h"

namespace ipclock_cli {

namespace {

constexpr size_t kWidth = 79;

// `items` joined with ", ", as text that starts at column `column` and
// wraps to lines indented by `indent` spaces, none wider than kWidth.
std::string WrapList(const std::vector<std::string>& items, size_t column, size_t indent) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string word = items[i] + (i + 1 < items.size() ? "," : "");
    if (i > 0) {
      if (column + 1 + word.size() > kWidth) {
        absl::StrAppend(&out, "\n", std::string(indent, ' '));
        column = indent;
      } else {
        out += ' ';
        ++column;
      }
    }
    out += word;
    column += word.size();
  }
  return out;
}

// From the registry of stores, so that help never names a store this build
// cannot use, nor misses one.
std::string Schemes(size_t column, size_t indent) {
  return WrapList(ipclock::SupportedDsnSchemes(), column, indent);
}

std::string StoresLine() {
  std::vector<std::string> schemes = ipclock::SupportedDsnSchemes();
  schemes.back() += absl::StrCat(" (default: ", ipclock::kDefaultDsn, ").");
  std::vector<std::string> missing;
  for (const ipclock::StoreInfo& s : ipclock::KnownStores()) {
    if (!s.built) missing.push_back(absl::StrCat(s.name, " (-D", s.feature, "=enabled)"));
  }
  if (!missing.empty()) missing.back() += ".";
  return absl::StrCat("Stores in this build: ", WrapList(schemes, 22, 2), "\n",
                      missing.empty()
                          ? ""
                          : absl::StrCat("Not in this build: ", WrapList(missing, 19, 2), "\n"));
}

std::string ListableStores() {
  std::vector<std::string> names;
  for (const ipclock::StoreInfo& s : ipclock::KnownStores()) {
    if (s.listable) names.push_back(s.name);
  }
  return WrapList(names, 45, 19);
}

}  // namespace

std::string MainHelp() {
  return absl::StrCat(
      "Usage: ipclock COMMAND [OPTIONS]\n"
      "\n"
      "Named locks between processes.\n"
      "\n"
      "Commands:\n"
      "  run     run a command while holding one or more locks, and stop it\n"
      "          if one is lost\n"
      "  list    show the locks held now: resource, holder, since when\n"
      "  doctor  check the host for what breaks locks (systemd RemoveIPC,\n"
      "          lock dirs that vanish or are unsafe, kernel limits)\n"
      "\n"
      "Options:\n"
      "  -h, --help     show this help (ipclock COMMAND --help for a command's)\n"
      "  -V, --version  show the version\n"
      "\n",
      StoresLine(), "See ipclock(1) for the exit statuses of every command.\n");
}

std::string RunHelp() {
  return absl::StrCat(
      "Usage: ipclock run (--key NAME ... | --file PATH) [OPTIONS] [--] COMMAND [ARGS...]\n"
      "       ipclock run (--key NAME ... | --file PATH) [OPTIONS] -c STRING\n"
      "\n"
      "Acquires the lock, runs COMMAND (without a shell) while holding it, watches\n"
      "that the lock stays held, and releases it once COMMAND has ended. If the\n"
      "lock is lost while COMMAND runs, COMMAND is stopped.\n"
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
      Schemes(43, 21),
      "\n"
      "\n"
      "How to lock:\n"
      "  -x, --exclusive      an exclusive lock (the default)\n"
      "  -s, --shared         a shared lock: shared holders run together (stores\n"
      "                       with shared locks only; elsewhere a usage error)\n"
      "  -n, --nonblock       try once; if busy, exit with the conflict status\n"
      "  -w, --wait SECS      wait at most SECS (fractions allowed; 0 tries\n"
      "                       once) for the lock, and for a store server that is\n"
      "                       down or not up yet (tried again with a backoff up\n"
      "                       to 1 s). The default is to wait for the lock for\n"
      "                       as long as it takes, but not for a store that has\n"
      "                       not answered yet (a wrong host or port looks like\n"
      "                       a server that is down): that ends with status 69.\n"
      "                       Waiters get the lock in the order they came on\n"
      "                       the semaphore store, and on flock, shm and\n"
      "                       posix-semaphore with fair=true in the DSN\n"
      "  -E, --conflict-exit-code N\n"
      "                       exit status when the lock is busy (default 1)\n"
      "      --permits N      holders allowed at once, on counting stores\n"
      "                       (elsewhere N > 1 is a usage error)\n"
      "      --limit N        a semaphore: at most N permits of the key held at\n"
      "                       once, on any store: one kernel count on the\n"
      "                       semaphore store, Symfony Semaphore's sorted sets\n"
      "                       on Redis, else N slot locks KEY_0 .. KEY_{N-1}\n"
      "                       (every user of KEY must give the same N)\n"
      "      --weight W       with --limit: take W of the N permits, all or\n"
      "                       none (default 1)\n"
      "      --ttl SECS       the lease on stores whose locks expire (default\n"
      "                       300): the lock outlives a killed ipclock by at most\n"
      "                       SECS; renewed every SECS/3 while COMMAND runs. No\n"
      "                       effect on stores without leases, whose locks end\n"
      "                       with the ipclock process. etcd's lease is the\n"
      "                       DSN's ttl= (60): a killed ipclock's lock lasts that\n"
      "                       long, and it is renewed every third of the shorter\n"
      "                       of the two\n"
      "\n"
      "While COMMAND runs:\n"
      "      --check-interval SECS\n"
      "                       how often to ask the store whether each lock is\n"
      "                       still held (default 1); a deleted lock file or dir\n"
      "                       or /dev/shm object, or a closed database session,\n"
      "                       is noticed at once where the kernel or server tells\n"
      "      --kill-after SECS\n"
      "                       after a loss, how long COMMAND has between SIGTERM\n"
      "                       and SIGKILL (default 1; 0 sends SIGKILL at once).\n"
      "                       Another holder may have the lock from the moment\n"
      "                       it was lost: this only bounds how long COMMAND\n"
      "                       runs on. IPCLOCK_FENCE is what protects the\n"
      "                       resource\n"
      "\n"
      "Under systemd (each only where $NOTIFY_SOCKET is set; see ipclock(1)):\n"
      "      --notify-ready   send READY=1 once the locks are held and COMMAND\n"
      "                       started (Type=notify, for a COMMAND that does not\n"
      "                       speak sd_notify itself)\n"
      "      --notify-wait    while waiting for a lock, send EXTEND_TIMEOUT_USEC=\n"
      "                       every 10 s, so that TimeoutStartSec= does not count\n"
      "                       the time spent queueing\n"
      "STATUS= tells systemctl status what ipclock waits for and who holds it,\n"
      "what it holds, and a lost lock. Where stderr is the journal\n"
      "($JOURNAL_STREAM), each message has its priority, and waiting, acquired,\n"
      "owner-died and lost are entries with IPCLOCK_EVENT=, IPCLOCK_STORE=,\n"
      "IPCLOCK_RESOURCE= and IPCLOCK_FENCE= (journalctl IPCLOCK_EVENT=lost).\n"
      "\n"
      "What to run:\n"
      "  -c, --command STRING run STRING with /bin/sh -c\n"
      "  -o, --close          flock: COMMAND does not inherit the lock's file\n"
      "                       descriptor, as with flock(1) -o. Without -o it\n"
      "                       does, and if ipclock is killed the lock stays\n"
      "                       held until COMMAND, and whatever it started that\n"
      "                       kept the descriptor, ends. With -o, and on every\n"
      "                       other store, COMMAND gets SIGKILL when ipclock\n"
      "                       dies. COMMAND inherits no other descriptor of\n"
      "                       ipclock's.\n"
      "      --verbose        report on stderr what is acquired, how long it\n"
      "                       took, the fencing token, and what is watched\n"
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
      "  IPCLOCK_SLOTS        with --limit on slot locks: the slots held, e.g.\n"
      "                       \"0 2\" (slot K is the lock KEY_K)\n"
      "  IPCLOCK_PREVIOUS_OWNER_DIED\n"
      "                       1 if a previous holder of any of the locks died\n"
      "                       holding it: what it guarded may be half-done\n"
      "  ETCD_LOCK_KEY, ETCD_LOCK_REV\n"
      "                       on etcd, IPCLOCK_RESOURCE's lock key and the revision\n"
      "                       at which it became ours (the fence), as `etcdctl\n"
      "                       lock` names and computes them (removed on other\n"
      "                       stores)\n"
      "\n"
      "A lost lock (its file, dir, segment or semaphore removed, its key deleted,\n"
      "its database session ended, its lease run out) is reported on stderr,\n"
      "naming the store, the resource and what happened; COMMAND gets SIGTERM,\n"
      "then SIGKILL after --kill-after, and ipclock exits ",
      kExitLockLost,
      ". A release that\n"
      "finds the lock gone exits ",
      kExitLockLost,
      " too, even if COMMAND succeeded.\n"
      "\n"
      "Process group: without a controlling terminal (cron, systemd, scripts\n"
      "run by setsid) COMMAND leads a process group of its own, and the stop\n"
      "signals and the signals passed on reach all of that group. With one,\n"
      "COMMAND stays in ipclock's process group so that the terminal and job\n"
      "control work as for any command (^C, ^Z, an editor); a stop then signals\n"
      "COMMAND alone.\n"
      "\n"
      "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to ipclock are\n"
      "passed on to COMMAND (those the terminal sends to the whole foreground\n"
      "job reach COMMAND directly and are not sent twice); the lock is released\n"
      "only after COMMAND has ended. SIGINT, SIGTERM or SIGHUP before COMMAND\n"
      "starts ends the wait: ipclock leaves the store's queue (an etcd key, a\n"
      "ZooKeeper node, a fair store's ticket), lets go of what it holds, and\n"
      "dies by the signal.\n"
      "\n"
      "Exit status:\n"
      "  Status   Meaning\n"
      "  -------  ------------------------------------------------------------\n"
      "  N        COMMAND ran and exited with N\n"
      "  128+N    COMMAND was killed by signal N, or ipclock got signal N\n"
      "           (SIGINT, SIGTERM, SIGHUP) before COMMAND started\n"
      "  1        the lock was busy (-n) or the wait ran out (-w); -E sets it\n"
      "  64       usage or configuration error, never tried again: a bad\n"
      "           option, DSN, option value or resource name; a file of the\n"
      "           wrong type (a FIFO, device, socket, dir, symbolic link or\n"
      "           /proc file); TLS or a name the server refuses; -s on a\n"
      "           store without shared locks, --permits on one that does not\n"
      "           count, --ttl past the longest lease the store keeps\n"
      "           (EX_USAGE)\n"
      "  69       store unavailable: a server down or starting up (tried\n"
      "           again until -w runs out; without -w, only once the store\n"
      "           has answered), or a store not in this build\n"
      "           (EX_UNAVAILABLE)\n"
      "  71       any other store or system error (EX_OSERR)\n"
      "  77       permission denied: credentials refused, a lock dir or file\n"
      "           this user may not use or others could replace (EX_NOPERM)\n"
      "  79       a lock was lost while COMMAND ran, or found gone at release\n"
      "  126      COMMAND was found but could not be executed\n"
      "  127      COMMAND was not found\n"
      "Use -E with a value COMMAND never returns to tell a busy lock from\n"
      "COMMAND's own status.\n");
}

std::string ListHelp() {
  return absl::StrCat(
      "Usage: ipclock list [--store DSN]... [--key NAME [--limit N]]\n"
      "                    [--format FORMAT | --json] [--output FILE]\n"
      "\n"
      "Shows the locks held now in one store or several, with the holder's pid,\n"
      "command and systemd unit, since when and for how long, and who waits and\n"
      "for how long, where the store can know. Reads only: it takes no lock and\n"
      "creates no lock dir, segment or semaphore.\n"
      "\n"
      "Options:\n"
      "      --store DSN  a store to list, again for each other one (default\n"
      "                   ",
      ipclock::kDefaultDsn,
      ", the default lock dir).\n"
      "                   Stores that can be listed: ",
      ListableStores(),
      "\n"
      "      --key NAME   show NAME's lock alone; the semaphore and\n"
      "                   posix-semaphore stores keep only a hash of each name\n"
      "                   and can name a lock only this way\n"
      "      --limit N    show NAME as the counting semaphore of N permits that\n"
      "                   run --limit takes: permits in use and free, holders\n"
      "                   with their weight and slots, waiters queued on a\n"
      "                   slot (waits of weight 1 poll, unseen); the semaphore\n"
      "                   store's set has its own limit and keeps a count, not\n"
      "                   who holds; table or json (holders, weight, slots,\n"
      "                   limit, in_use, free, dead_slots, waiters, waiting)\n"
      "      --format table|json|openmetrics\n"
      "                   table (the default); json, an array of objects (store,\n"
      "                   resource, object, lock, mode, pid, command,\n"
      "                   command_line, unit, cgroup, since, held_seconds, fence,\n"
      "                   waiters, waiting: [{pid, command, unit, mode, since,\n"
      "                   waited_seconds}], and the store's own fields);\n"
      "                   openmetrics, gauges for node_exporter's textfile\n"
      "                   collector, one series per lock labelled with its store\n"
      "                   and lock: holders, who holds (ipclock_lock_holder_info),\n"
      "                   how long held, waiters, the longest wait, fences, and\n"
      "                   ipclock_list_success per store (this look from outside;\n"
      "                   a process's own counters are in its ipclock metrics)\n"
      "      --json       the same as --format json\n"
      "      --output FILE\n"
      "                   write to FILE instead of stdout, replacing it whole (a\n"
      "                   file beside it, synced, then renamed over it, as the\n"
      "                   textfile collector needs); with openmetrics, a store\n"
      "                   that fails keeps its series from FILE's last content,\n"
      "                   its ipclock_list_success at 0\n"
      "  -h, --help       show this help\n"
      "\n"
      "What each store shows:\n"
      "  flock            lock files locked now (/proc/locks): the resource (its\n"
      "                   name as the file keeps it, else the readable part of\n"
      "                   the file's name), shared or exclusive, the fencing\n"
      "                   token and held mark of the holder record, waiters;\n"
      "                   SINCE is the file's mtime, which an exclusive holder's\n"
      "                   record sets at acquisition (shown only when the record\n"
      "                   is its own); waiters by pid from /proc/locks and, with\n"
      "                   fair=true, from the queue in the file, without a time\n"
      "  shm://NAME       held slots of the segment: name, holder, since when,\n"
      "                   fence, refcount; ipclock's waiters by pid, since when;\n"
      "                   a holder that died is shown as such\n"
      "  semaphore        SysV sets of ipclock's or Symfony's layout whose lock\n"
      "                   is taken: IPC key, semval against permits, the last pid\n"
      "                   to operate on it, SINCE as its last semop (the hold is\n"
      "                   at least that long), waiters (GETNCNT) without a time\n"
      "  posix-semaphore  holders in the registries in /dev/shm, since when,\n"
      "                   permits free, waiters by pid, since when\n"
      "UNIT is the holder's systemd unit: the last .service or .scope in its\n"
      "cgroup (/proc/PID/cgroup), for holders that are processes of this host.\n"
      "\n"
      "Exit status: 0 when every store was listed (whether or not locks are\n"
      "held); otherwise as for run: 64 for a usage or configuration error,\n"
      "including a store that cannot be listed from outside (in-memory, redis,\n"
      "memcached, postgresql+advisory: ask their server), before any store is\n"
      "listed; 69 for a store not in this build or a server not answering; 71\n"
      "when the store's files cannot be read, or FILE written; 77 when reading\n"
      "them is denied. With several stores, the others are listed all the same\n"
      "and the status is the first failure's.\n");
}

std::string DoctorHelp() {
  return absl::StrCat(
      "Usage: ipclock doctor [--store DSN] [--root DIR] [--user NAME|UID] [--json]\n"
      "\n"
      "Checks what would break the locks of a user's programs, and says what to\n"
      "change for each finding:\n"
      "  removeipc             systemd-logind's RemoveIPC=, which deletes the\n"
      "                        user's SysV semaphores and /dev/shm objects at\n"
      "                        logout (held locks included)\n"
      "  lock-dir-lifetime     a lock dir in /run/user/UID (removed at logout),\n"
      "                        /dev/shm, or under /tmp or /var/tmp (cleaned by age)\n"
      "  lock-dir-permissions  a lock dir that others could write, a symlink, or\n"
      "                        a dir above it that a user other than root and\n"
      "                        the checked user owns or can write (without the\n"
      "                        sticky bit): they could rename the lock dir away\n"
      "  lock-dir-filesystem   a lock dir on NFS, SMB/CIFS, FUSE, 9p or Ceph\n"
      "  sysv-limits           kernel.sem (SEMMSL SEMMNS SEMOPM SEMMNI) and the\n"
      "                        sets in use\n"
      "  io_uring              whether io_uring is enabled and works here\n"
      "  timed-wait-signal     the real-time signal timed flock waits use\n"
      "\n"
      "Options:\n"
      "      --store DSN       the store to check (default ",
      ipclock::kDefaultDsn,
      "); the flock store's\n"
      "                        lock dir comes from it. Stores: ",
      Schemes(56, 24),
      "\n"
      "      --root DIR        read configuration (logind.conf and drop-ins,\n"
      "                        login.defs, passwd, linger flags) and lock dirs\n"
      "                        from the system tree at DIR instead of this host,\n"
      "                        e.g. an image before it boots (files there that\n"
      "                        are not regular, such as FIFOs, are never read);\n"
      "                        kernel checks then only inform\n"
      "      --user NAME|UID   check for this user (default: the effective uid);\n"
      "                        names are looked up in DIR/etc/passwd with --root\n"
      "      --json            print one JSON object: uid, user, root, store,\n"
      "                        at_risk, risks, findings (check, level, subject,\n"
      "                        message, advice)\n"
      "  -h, --help            show this help\n"
      "\n"
      "Levels: ok; info (worth knowing, does not break locks by itself); risk.\n"
      "Without --store, and for another user's default lock dir (which depends\n"
      "on whether their programs run in a login session), dirs are reported as\n"
      "info; name the store with --store to have them judged.\n"
      "\n"
      "Exit status:\n"
      "  0   nothing found that breaks locks\n"
      "  1   at least one finding is a risk\n"
      "  64  usage or configuration error: bad option, a DSN or a file it names\n"
      "      that its store refuses, unknown user, --root not a dir\n"
      "  77  a file may not be read\n"
      "  71  any other error\n");
}

}  // namespace ipclock_cli
