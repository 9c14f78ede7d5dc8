// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "peer_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "ipclock/spi/deadline.h"
#include "spawn_util.h"

namespace ipclock_test {

namespace {

double Now() { return static_cast<double>(ipclock::Deadline::NowNanos()) / 1e9; }

}  // namespace

PeerProcess::PeerProcess(const std::vector<std::string>& argv) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) abort();
  SpawnOptions options;
  options.stdin_fd = in[0];
  options.stdout_fd = out[1];
  pid_ = Spawn(argv, options);
  close(in[0]);
  close(out[1]);
  to_peer_ = in[1];
  from_peer_ = out[0];
}

PeerProcess::~PeerProcess() {
  CloseStdin();
  close(from_peer_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    WaitPlain(pid_, 5);
  }
}

std::string PeerProcess::ReadLine(double timeout_sec) {
  std::string line;
  const double until = Now() + timeout_sec;
  for (;;) {
    struct pollfd p = {from_peer_, POLLIN, 0};
    int ms = static_cast<int>((until - Now()) * 1000);
    if (ms <= 0 || poll(&p, 1, ms) <= 0) return line;
    char c;
    if (read(from_peer_, &c, 1) != 1 || c == '\n') return line;
    line.push_back(c);
  }
}

void PeerProcess::CloseStdin() {
  if (to_peer_ >= 0) close(to_peer_);
  to_peer_ = -1;
}

int PeerProcess::Wait(double timeout_sec) {
  int code = WaitPlain(pid_, timeout_sec);
  pid_ = -1;
  return code;
}

std::string RunForOutput(const std::vector<std::string>& argv, int* code) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) abort();
  SpawnOptions options;
  options.stdout_fd = out[1];
  pid_t pid = Spawn(argv, options);
  close(out[1]);
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  *code = WaitPlain(pid);
  return std::string(absl::StripAsciiWhitespace(text));
}

}  // namespace ipclock_test
