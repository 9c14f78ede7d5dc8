// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/holder_note/holder_note.h"

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

HolderNote ParseHolderNote(absl::string_view note) {
  HolderNote out;
  for (absl::string_view field : absl::StrSplit(note, ' ')) {
    if (absl::ConsumePrefix(&field, "host=")) out.host = std::string(field);
    if (absl::ConsumePrefix(&field, "pid=") && !absl::SimpleAtoi(field, &out.pid)) out.pid = 0;
    if (absl::ConsumePrefix(&field, "since=") && !absl::SimpleAtoi(field, &out.since)) {
      out.since = 0;
    }
  }
  return out;
}

void FillFromHolderNote(absl::string_view note, const std::string& this_host, HeldLock* lock) {
  const HolderNote n = ParseHolderNote(note);
  if (!n.host.empty()) lock->text_details.emplace_back("host", n.host);
  if (n.pid > 0 && n.host == this_host) {
    lock->pid = n.pid;
    lock->command = ProcessCommandName(n.pid);
  }
}

LockWaiter WaiterFromNote(absl::string_view note, const std::string& this_host) {
  const HolderNote n = ParseHolderNote(note);
  LockWaiter w;
  if (n.pid > 0 && n.host == this_host) {
    w.pid = n.pid;
    w.command = ProcessCommandName(n.pid);
  }
  if (n.since > 0) w.since = n.since;
  return w;
}

}  // namespace ipclock
