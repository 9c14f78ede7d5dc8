// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A peer program (a PHP script, the CLI) that the suites talk to by lines:
// it prints what it did ("locked", "busy"), holds until its stdin closes,
// and says "released". Nothing here calls CMocka, so forked children may use
// it too.

#ifndef IPCLOCK_TESTS_PEER_PROCESS_H_
#define IPCLOCK_TESTS_PEER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace ipclock_test {

class PeerProcess {
 public:
  // Starts `argv` with pipes on its stdin and stdout.
  explicit PeerProcess(const std::vector<std::string>& argv);
  // Kills the peer if it is still running.
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  // The next line the peer prints, without its newline; what came so far on
  // timeout or end of output.
  std::string ReadLine(double timeout_sec = 20);
  // Closes the peer's stdin (its signal to let go).
  void CloseStdin();
  // The peer's pid, to signal it (SIGSTOP, SIGKILL).
  pid_t pid() const { return pid_; }
  // Waits for the peer to exit: its exit code, 128+N for signal N, -1 on
  // timeout (it is then killed).
  int Wait(double timeout_sec = 30);

 private:
  pid_t pid_ = -1;
  int to_peer_ = -1;
  int from_peer_ = -1;
};

// Runs `argv` to the end: its stdout with surrounding whitespace trimmed;
// its exit code in `*code`.
std::string RunForOutput(const std::vector<std::string>& argv, int* code);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_PEER_PROCESS_H_
