// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "startup.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "measure.h"

extern char** environ;

namespace ipclock_bench {

namespace {

std::vector<char*> Argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// One run with stdout and stderr on /dev/null: false if it could not be
// started or did not exit 0.
bool RunOnce(const std::vector<std::string>& argv, double* wall_us, double* cpu_us) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args = Argv(argv);
  const int64_t start = NowNs();
  pid_t pid;
  const int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return false;
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid) return false;
  *wall_us = static_cast<double>(NowNs() - start) / 1000.0;
  *cpu_us = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Reads VmHWM and the shared objects of a process stopped at its exit.
void ReadProc(pid_t pid, ProcessPeak* out) {
  const std::string proc = "/proc/" + std::to_string(pid);
  for (absl::string_view line : absl::StrSplit(ReadFile(proc + "/status"), '\n')) {
    if (absl::ConsumePrefix(&line, "VmHWM:")) {
      line = absl::StripAsciiWhitespace(absl::StripSuffix(line, "kB"));
      double kib;
      if (absl::SimpleAtod(line, &kib)) out->peak_rss_kib = kib;
    }
  }
  std::set<std::string> seen;
  for (absl::string_view line : absl::StrSplit(ReadFile(proc + "/maps"), '\n')) {
    const size_t slash = line.find('/');
    if (slash == absl::string_view::npos) continue;
    std::string path(line.substr(slash));
    const std::string base = path.substr(path.rfind('/') + 1);
    if (!absl::StrContains(base, ".so")) continue;
    if (seen.insert(path).second) out->objects.push_back(path);
  }
  out->ok = out->peak_rss_kib > 0;
}

}  // namespace

std::map<std::string, ProcessTimes> TimePrograms(
    const std::map<std::string, std::vector<std::string>>& programs, int runs) {
  std::map<std::string, std::vector<double>> wall, cpu;
  std::set<std::string> failed;
  for (int round = -1; round < runs; ++round) {  // round -1 warms the caches
    for (const auto& [name, argv] : programs) {
      double w, c;
      if (!RunOnce(argv, &w, &c)) {
        failed.insert(name);
        continue;
      }
      if (round >= 0) {
        wall[name].push_back(w);
        cpu[name].push_back(c);
      }
    }
  }
  std::map<std::string, ProcessTimes> out;
  for (const auto& [name, argv] : programs) {
    if (failed.count(name) != 0) {
      std::string line;
      for (const std::string& a : argv) line += " " + a;
      std::fprintf(stderr, "bench: failed:%s\n", line.c_str());
      out[name] = ProcessTimes();
      continue;
    }
    out[name] = ProcessTimes{Median(wall[name]), Median(cpu[name])};
  }
  return out;
}

ProcessPeak PeakOf(const std::vector<std::string>& argv) {
  ProcessPeak out;
  std::vector<char*> args = Argv(argv);
  const pid_t pid = fork();
  if (pid < 0) return out;
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(126);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  // The stop at exec.
  if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
    waitpid(pid, &status, 0);
    return out;
  }
  ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXIT));
  ptrace(PTRACE_CONT, pid, nullptr, nullptr);
  while (waitpid(pid, &status, 0) == pid && WIFSTOPPED(status)) {
    int deliver = 0;
    if ((status >> 8) == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
      ReadProc(pid, &out);
    } else if (WSTOPSIG(status) != SIGTRAP) {
      deliver = WSTOPSIG(status);  // its own signals (SIGCHLD) go on to it
    }
    ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(deliver)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out.ok = false;
  return out;
}

int DlopenedBy(const std::vector<std::string>& argv, std::vector<std::string>* names) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  std::vector<char*> args = Argv(argv);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fds[1], 2);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    setenv("LD_DEBUG", "files", 1);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string err;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  int count = 0;
  // "   1234:	file=libhiredis.so.0.14 [0];  dynamically loaded by /.../ipclock [0]"
  for (absl::string_view line : absl::StrSplit(err, '\n')) {
    if (!absl::StrContains(line, "dynamically loaded by")) continue;
    ++count;
    const size_t at = line.find("file=");
    if (at != absl::string_view::npos && names != nullptr) {
      absl::string_view name = line.substr(at + 5);
      names->emplace_back(name.substr(0, name.find(' ')));
    }
  }
  return count;
}

}  // namespace ipclock_bench
