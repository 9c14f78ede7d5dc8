// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/journal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ipclock {

bool JournalStreamNames(absl::string_view value, int fd) {
  std::vector<absl::string_view> parts = absl::StrSplit(value, ':');
  uint64_t dev = 0;
  uint64_t ino = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &dev) ||
      !absl::SimpleAtoi(parts[1], &ino)) {
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  return static_cast<uint64_t>(st.st_dev) == dev && static_cast<uint64_t>(st.st_ino) == ino;
}

bool StderrIsJournalStream() {
  static const bool journal = [] {
    const char* value = getenv("JOURNAL_STREAM");
    return value != nullptr && JournalStreamNames(value, STDERR_FILENO);
  }();
  return journal;
}

std::string JournalSocketPath() {
  const char* path = getenv("IPCLOCK_JOURNAL_SOCKET");
  return path != nullptr && path[0] != '\0' ? path : "/run/systemd/journal/socket";
}

std::string EncodeJournalEntry(absl::Span<const JournalField> fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (value.find('\n') == absl::string_view::npos) {
      absl::StrAppend(&out, name, "=", value, "\n");
      continue;
    }
    absl::StrAppend(&out, name, "\n");
    uint64_t size = value.size();
    for (int i = 0; i < 8; ++i) {
      out += static_cast<char>(size & 0xff);
      size >>= 8;
    }
    absl::StrAppend(&out, value, "\n");
  }
  return out;
}

bool SendJournalEntry(absl::Span<const JournalField> fields) {
  const std::string path = JournalSocketPath();
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof(addr));
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return false;
  memcpy(addr.sun_path, path.data(), path.size());
  // One socket for the process, made at the first entry.
  static std::mutex mu;
  static int fd = -1;
  std::lock_guard<std::mutex> guard(mu);
  if (fd < 0) {
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return false;
  }
  const std::string entry = EncodeJournalEntry(fields);
  ssize_t n;
  do {
    n = sendto(fd, entry.data(), entry.size(), MSG_NOSIGNAL,
               reinterpret_cast<const struct sockaddr*>(&addr), sizeof(addr));
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(entry.size());
}

}  // namespace ipclock
