// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "own_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ipclock/spi/deadline.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

namespace {

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<struct sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether a server could listen on 127.0.0.1:`port` (as servers do, with
// SO_REUSEADDR). A connect() is no test: a frozen server's full backlog
// refuses it, yet its port stays taken.
bool Bindable(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = bind(fd, reinterpret_cast<struct sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

}  // namespace

bool Listening(int port) {
  int fd = Connect(port);
  if (fd < 0) return false;
  close(fd);
  return true;
}

int TestPortBase() {
  const char* env = getenv("IPCLOCK_TEST_PORT_BASE");
  int base = 0;
  if (env == nullptr || !absl::SimpleAtoi(env, &base) || base <= 0) base = 21300;
  return base;
}

int FreeOwnPort(int from) {
  const int base = TestPortBase();
  for (int p = base + from; p <= base + 98; ++p) {
    if (!Listening(p) && Bindable(p)) return p;
  }
  return 0;
}

namespace {

// Whether every thread of `pid` is stopped ('T' in /proc/PID/task/*/stat).
bool AllStopped(pid_t pid) {
  const std::string dir = absl::StrCat("/proc/", pid, "/task");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  bool all = true;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string stat = ReadFileOrEmpty(absl::StrCat(dir, "/", e->d_name, "/stat"));
    const size_t paren = stat.rfind(')');
    all = all && paren != std::string::npos && stat.size() > paren + 2 && stat[paren + 2] == 'T';
  }
  closedir(d);
  return all;
}

}  // namespace

void FreezeProcess(pid_t pid) {
  // kill(0 or -1, ...) would stop this test's own process group, or every
  // process it may signal: a server whose pid file was unreadable is a
  // failure, never a signal.
  if (pid <= 0) fail_msg("no server process to freeze (pid %d)", static_cast<int>(pid));
  kill(pid, SIGSTOP);
  const int64_t until = ipclock::Deadline::NowNanos() + 5000000000;
  while (!AllStopped(pid) && ipclock::Deadline::NowNanos() < until) usleep(5000);
}

std::string RawExchange(int port, const std::string& request,
                        const std::function<bool(const std::string&)>& done,
                        double timeout_sec) {
  int fd = Connect(port);
  if (fd < 0) return "";
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  const int64_t until =
      ipclock::Deadline::NowNanos() + static_cast<int64_t>(timeout_sec * 1e9);
  char buf[65536];
  while (!done(reply)) {
    const int64_t left_ms = (until - ipclock::Deadline::NowNanos()) / 1000000;
    struct pollfd p = {fd, POLLIN, 0};
    if (left_ms <= 0 || poll(&p, 1, static_cast<int>(left_ms)) <= 0) break;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

namespace {
std::vector<pid_t>& OwnServers() {
  static std::vector<pid_t>* pids = new std::vector<pid_t>();
  return *pids;
}
}  // namespace

void RegisterOwnServer(pid_t pid) {
  if (pid > 0) OwnServers().push_back(pid);  // see FreezeProcess()
}

void ForgetOwnServer(pid_t pid) {
  auto& v = OwnServers();
  v.erase(std::remove(v.begin(), v.end(), pid), v.end());
}

int StopOwnServers(void**) {
  for (pid_t pid : OwnServers()) {
    kill(pid, SIGKILL);
    WaitPlain(pid, 10);
  }
  OwnServers().clear();
  return 0;
}

void KillOwnServer(pid_t* pid) {
  if (*pid <= 0) return;
  kill(*pid, SIGKILL);
  WaitPlain(*pid, 10);
  ForgetOwnServer(*pid);
  *pid = -1;
}

int DsnPort(const std::string& dsn) {
  size_t authority = dsn.find("://");
  if (authority == std::string::npos) return 0;
  authority += 3;
  size_t end = dsn.find_first_of("/?,", authority);
  std::string host_port = dsn.substr(authority, end == std::string::npos ? end : end - authority);
  size_t colon = host_port.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port)) {
    return 0;
  }
  return port;
}

}  // namespace ipclock_test
