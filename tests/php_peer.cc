// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include <stdlib.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "spawn_util.h"
#include "php_peer.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

namespace {

std::string SymfonyAutoload() {
  const char* env = getenv("IPCLOCK_SYMFONY_AUTOLOAD");
  return env != nullptr && env[0] != '\0' ? env
                                          : "/usr/share/php/Symfony/Component/Lock/autoload.php";
}

}  // namespace

std::string PhpPeerScript(absl::string_view name) {
  const char* root = getenv("IPCLOCK_SOURCE_ROOT");
  return absl::StrCat(root != nullptr ? root : ".", "/tests/php/", name);
}

const char* PhpPeerMissing(const PhpPeerNeeds& needs) {
  static std::string why;
  if (FindInPath("php").empty()) {
    why = absl::StrCat("php is not installed (apt-get install ", needs.packages, ")");
  } else if (needs.symfony && !FileExists(SymfonyAutoload())) {
    why = absl::StrCat("Symfony Lock is not installed: no ", SymfonyAutoload(),
                       " (apt-get install php-symfony-lock)");
  } else if (!FileExists(needs.script)) {
    why = absl::StrCat("no ", needs.script, " (is IPCLOCK_SOURCE_ROOT set?)");
  } else if (!needs.extension.empty() &&
             WaitPlain(Spawn({"php", "-r",
                              absl::StrCat("exit(extension_loaded('", needs.extension,
                                           "') ? 0 : 1);")})) != 0) {
    why = absl::StrCat("PHP has no ", needs.extension, " (apt-get install ", needs.packages, ")");
  } else {
    return nullptr;
  }
  return why.c_str();
}

bool PhpRequired() {
  const char* required = getenv("IPCLOCK_REQUIRE_PHP");
  return required != nullptr && strcmp(required, "1") == 0;
}

std::string RunPhpPeer(const std::vector<std::string>& argv) {
  int code = 0;
  std::string said = RunForOutput(argv, &code);
  if (code != 0) fail_msg("php peer exited %d: %s", code, said.c_str());
  return said;
}

PhpPeerHolder::PhpPeerHolder(const std::vector<std::string>& argv) : peer_(argv) {
  const std::string said = peer_.ReadLine();
  if (said != "locked") fail_msg("php peer said '%s', expected 'locked'", said.c_str());
}

void PhpPeerHolder::Finish(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    const std::string said = peer_.ReadLine();
    if (said != line) fail_msg("php peer said '%s', expected '%s'", said.c_str(), line.c_str());
  }
  assert_int_equal(peer_.Wait(), 0);
}

}  // namespace ipclock_test
