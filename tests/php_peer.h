// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The PHP peers of the interop suites (tests/php/*.php): where a peer is,
// why it cannot run on this host, and the two ways the suites run one: to
// the end for a one-shot answer ("acquired", "busy"), or holding a lock
// until its stdin closes.
//
// Include this header last: it pulls in cmocka.h (through test_util.h).

#ifndef IPCLOCK_TESTS_PHP_PEER_H_
#define IPCLOCK_TESTS_PHP_PEER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "peer_process.h"
#include "test_util.h"

namespace ipclock_test {

// $IPCLOCK_SOURCE_ROOT/tests/php/`name`.
std::string PhpPeerScript(absl::string_view name);

// What a peer needs besides php itself.
struct PhpPeerNeeds {
  std::string script;           // its path (PhpPeerScript())
  bool symfony = true;          // it loads Symfony Lock
  std::string extension;        // a PHP extension it uses ("" for none)
  std::string packages;         // the Debian packages that bring it all
};

// Why the peer cannot run here, or nullptr if it can. The text lives in a
// static, so that skip()'s longjmp leaves no destructor behind.
const char* PhpPeerMissing(const PhpPeerNeeds& needs);

// Whether $IPCLOCK_REQUIRE_PHP is 1 (tests/meson.build sets it for the
// interop suites under -Dphp_interop=enabled): a peer that cannot run then
// fails the test instead of skipping it.
bool PhpRequired();

// Skips (or fails) the test unless the peer `needs` describes can run. The
// check ends before the skip, so its temporaries are gone by then.
#define REQUIRE_PHP_PEER(needs, required)                                    \
  do {                                                                       \
    const char* php_missing = ::ipclock_test::PhpPeerMissing(needs);         \
    ::ipclock_test::SkipIf(php_missing, required);                           \
  } while (0)

// Runs a peer in a one-shot mode: its output, trimmed. Fails the test unless
// it exits 0.
std::string RunPhpPeer(const std::vector<std::string>& argv);

// A peer that holds a lock: the test fails unless its first line is
// "locked".
class PhpPeerHolder {
 public:
  explicit PhpPeerHolder(const std::vector<std::string>& argv);

  // Tells it to let go (safe from any thread: it closes a pipe).
  void LetGo() { peer_.CloseStdin(); }
  // Fails the test unless its next lines are `lines` and it then exits 0.
  void Finish(const std::vector<std::string>& lines = {"released"});
  // LetGo(), then Finish().
  void Release(const std::vector<std::string>& lines = {"released"}) {
    LetGo();
    Finish(lines);
  }

 private:
  PeerProcess peer_;
};

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_PHP_PEER_H_
