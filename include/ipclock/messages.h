// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: messages.h
// -----------------------------------------------------------------------------
//
// Where ipclock's messages go. A library should not decide where a program's
// messages go, yet some things must not pass in silence: a lock dir that
// systemd may delete at logout, a lease that ran out while held, a lock lost
// while held, keys named without a secret, async waits falling back to
// threads. Every such message goes to one sink that the program sets; the
// default writes one line to stderr, because a silent default would hide
// exactly what these messages exist to show.
//
// Example (a daemon that logs to the journal):
//
//   ipclock::SetMessageSink([](const ipclock::Message& m) {
//     sd_journal_print(m.severity == ipclock::MessageSeverity::kWarning
//                          ? LOG_WARNING : LOG_INFO,
//                      "%s", m.text.c_str());
//   });
//
// The sink may be called from any thread, including the watch's thread
// (lock_watch.h), and from several at once; it runs with no ipclock lock
// held. Set an empty sink to say nothing.

#ifndef IPCLOCK_MESSAGES_H_
#define IPCLOCK_MESSAGES_H_

#include <functional>
#include <string>

namespace ipclock {

enum class MessageSeverity {
  kInfo,     // worth knowing; nothing is wrong with any lock
  kWarning,  // a lock is at risk, or was lost
};

struct Message {
  MessageSeverity severity = MessageSeverity::kWarning;
  // The whole message, one line without the newline, starting with
  // "ipclock: ".
  std::string text;
};

using MessageSink = std::function<void(const Message&)>;

// Sets the process-wide sink and returns the previous one.
MessageSink SetMessageSink(MessageSink sink);

// The default sink: the text and a newline on stderr, in one write.
void WriteMessageToStderr(const Message& message);

}  // namespace ipclock

#endif  // IPCLOCK_MESSAGES_H_
