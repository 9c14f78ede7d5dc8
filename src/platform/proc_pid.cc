// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/proc_pid.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "platform/small_file.h"

namespace ipclock {

namespace {

struct ProcStat {
  char state = '?';
  uint64_t start_time = 0;
};

// 0, or the errno of opening the file (ENOENT: no such process).
int ReadProcStat(pid_t pid, ProcStat* out) {
  char path[40];
  snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
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
  // Field 3 is the state; field 22 is 19 spaces further on.
  for (int field = 3; field < 22; ++field) {
    p = strchr(p, ' ');
    if (p == nullptr) return EINVAL;
    ++p;
  }
  out->start_time = strtoull(p, nullptr, 10);
  return 0;
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
    if (st.state == 'Z' || st.state == 'X') return true;
    return start_time != 0 && st.start_time != start_time;
  }
  // /proc mounted with hidepid=2 answers ENOENT for other users' live
  // processes; only the kernel's own ESRCH is proof.
  return kill(pid, 0) != 0 && errno == ESRCH;
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

}  // namespace ipclock
