// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/holder_note.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "platform/proc_pid.h"
#include "platform/small_file.h"

namespace ipclock {

std::string LocalHostName() {
  std::string host = ReadSmallFile("/proc/sys/kernel/hostname", 256).value_or(std::string("?"));
  return std::string(absl::StripTrailingAsciiWhitespace(host));
}

std::string HolderNotePrefix() { return absl::StrCat("ipclock host=", LocalHostName(), " pid="); }

void FillFromHolderNote(absl::string_view note, const std::string& this_host, HeldLock* lock) {
  std::string their_host;
  int pid = 0;
  for (absl::string_view field : absl::StrSplit(note, ' ')) {
    if (absl::ConsumePrefix(&field, "host=")) their_host = std::string(field);
    if (absl::ConsumePrefix(&field, "pid=")) (void)absl::SimpleAtoi(field, &pid);
  }
  if (!their_host.empty()) lock->text_details.emplace_back("host", their_host);
  if (pid > 0 && their_host == this_host) {
    lock->pid = pid;
    lock->command = ProcessCommandName(pid);
  }
}

}  // namespace ipclock
