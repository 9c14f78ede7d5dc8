// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/proc_pid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/small_file.h"

namespace ipclock {

namespace {

// PF_EXITING in the flags field of /proc/PID/stat (include/linux/sched.h,
// unchanged since Linux 2.6). The kernel sets it first thing in do_exit(),
// before it gives back the process's SEM_UNDO adjustments, flocks and
// robust mutexes, and the process never runs user code again.
constexpr unsigned long kPfExiting = 0x4;

struct ProcStat {
  char state = '?';
  pid_t ppid = 0;
  unsigned long flags = 0;
  long num_threads = 0;
  uint64_t start_time = 0;
};

// Dead or dying: a zombie, or every thread past the point of no return.
bool Ending(const ProcStat& st) {
  return st.state == 'Z' || st.state == 'X' || (st.flags & kPfExiting) != 0;
}

// 0, or the errno of opening the file (ENOENT: no such process). `path` is
// /proc/PID/stat or /proc/PID/task/TID/stat.
int ReadStatFile(const char* path, ProcStat* out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  // 512 bytes hold the first 22 fields even with a 16-byte comm full of
  // spaces and parentheses.
  char buf[1024];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof(buf) - 1);
  } while (n < 0 && errno == EINTR);
  int err = errno;
  close(fd);
  if (n <= 0) return n < 0 ? err : ESRCH;
  buf[n] = '\0';
  // comm (field 2) may itself contain ") ": the fields resume after the
  // last ')'.
  char* p = strrchr(buf, ')');
  if (p == nullptr || p[1] != ' ') return EINVAL;
  p += 2;
  out->state = *p;
  // Field 3 is the state, 9 the flags, 20 the thread count, 22 the start
  // time.
  for (int field = 3; field < 22; ++field) {
    p = strchr(p, ' ');
    if (p == nullptr) return EINVAL;
    ++p;
    if (field + 1 == 4) out->ppid = static_cast<pid_t>(strtol(p, nullptr, 10));
    if (field + 1 == 9) out->flags = strtoul(p, nullptr, 10);
    if (field + 1 == 20) out->num_threads = strtol(p, nullptr, 10);
  }
  out->start_time = strtoull(p, nullptr, 10);
  return 0;
}

// The leader thread's entry, /proc/PID/task/PID/stat, holds the same state,
// thread count and start time as /proc/PID/stat. It is read instead because
// qemu-user answers a program's reads of /proc/self/stat and /proc/<own
// pid>/stat itself, with a start time of its own reckoning a tick or two off
// the kernel's: an emulated holder then saw its own slot as a reused pid's,
// and rivals saw the start time it recorded as another process's. The task
// entry it passes through to the kernel.
int ReadProcStat(pid_t pid, ProcStat* out) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", static_cast<int>(pid),
           static_cast<int>(pid));
  return ReadStatFile(path, out);
}

// /proc/PID/stat describes the thread group's leader only, which may have
// ended (pthread_exit) while other threads go on: then each thread is asked.
bool EveryThreadEnding(pid_t pid) {
  char dir_path[40];
  snprintf(dir_path, sizeof(dir_path), "/proc/%d/task", static_cast<int>(pid));
  DIR* dir = opendir(dir_path);
  if (dir == nullptr) return errno == ENOENT;
  bool ending = true;
  while (struct dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[320];
    snprintf(path, sizeof(path), "%s/%.255s/stat", dir_path, e->d_name);
    ProcStat st;
    // A thread that vanished while we looked has ended.
    if (ReadStatFile(path, &st) == 0 && !Ending(st)) {
      ending = false;
      break;
    }
  }
  closedir(dir);
  return ending;
}

}  // namespace

uint64_t ProcessStartTime(pid_t pid) {
  ProcStat st;
  return ReadProcStat(pid, &st) == 0 ? st.start_time : 0;
}

bool ProcessIsGone(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return false;
  ProcStat st;
  int err = ReadProcStat(pid, &st);
  if (err == 0) {
    if (start_time != 0 && st.start_time != start_time) return true;
    if (!Ending(st)) return false;
    return st.num_threads <= 1 || EveryThreadEnding(pid);
  }
  // /proc mounted with hidepid=2 answers ENOENT for other users' live
  // processes; only the kernel's own ESRCH is proof.
  return kill(pid, 0) != 0 && errno == ESRCH;
}

bool NoSuchProcess(pid_t pid) {
  return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

std::vector<pid_t> ChildProcesses(pid_t parent) {
  std::vector<pid_t> children;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return children;
  while (struct dirent* e = readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const pid_t pid = static_cast<pid_t>(strtol(e->d_name, nullptr, 10));
    ProcStat st;
    if (ReadProcStat(pid, &st) == 0 && st.ppid == parent) children.push_back(pid);
  }
  closedir(dir);
  return children;
}

uint64_t PidNamespaceId() {
  struct stat sb;
  if (stat("/proc/self/ns/pid", &sb) != 0) return 0;
  return static_cast<uint64_t>(sb.st_ino);
}

std::string ProcessCommandName(pid_t pid) {
  if (pid <= 0) return "";
  std::optional<std::string> comm = ReadSmallFile(absl::StrCat("/proc/", pid, "/comm"), 64);
  if (!comm) return "";
  while (!comm->empty() && comm->back() == '\n') comm->pop_back();
  return *comm;
}

std::string ProcessCommandLine(pid_t pid, size_t max_bytes) {
  if (pid <= 0) return "";
  std::optional<std::string> line = ReadSmallFile(absl::StrCat("/proc/", pid, "/cmdline"));
  if (!line) return "";
  while (!line->empty() && line->back() == '\0') line->pop_back();
  for (char& c : *line) {
    if (c == '\0') c = ' ';
  }
  if (line->size() > max_bytes) line->resize(max_bytes);
  return *line;
}

namespace {

std::string UnitOfCgroupPath(absl::string_view path) {
  std::string unit;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (absl::EndsWith(part, ".service") || absl::EndsWith(part, ".scope")) {
      unit = std::string(part);
    }
  }
  return unit;
}

}  // namespace

ProcessCgroup ParseProcessCgroup(absl::string_view text) {
  // Lines read "ID:CONTROLLERS:PATH"; the path may itself hold ':'.
  std::string unified;
  std::string systemd_v1;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    if (f[0] == "0" && f[1].empty()) unified = std::string(f[2]);
    if (f[1] == "name=systemd") systemd_v1 = std::string(f[2]);
  }
  ProcessCgroup out;
  for (const std::string* path : {&unified, &systemd_v1}) {
    std::string unit = UnitOfCgroupPath(*path);
    if (!unit.empty()) {
      out.path = *path;
      out.unit = std::move(unit);
      return out;
    }
  }
  out.path = !unified.empty() ? unified : systemd_v1;
  return out;
}

ProcessCgroup ReadProcessCgroup(pid_t pid) {
  if (pid <= 0) return ProcessCgroup();
  std::optional<std::string> text = ReadSmallFile(absl::StrCat("/proc/", pid, "/cgroup"), 65536);
  if (!text) return ProcessCgroup();
  return ParseProcessCgroup(*text);
}

}  // namespace ipclock
