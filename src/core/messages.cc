// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/messages.h"

#include <stdio.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <utility>

namespace ipclock {
namespace {

std::mutex& SinkMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

// Never destroyed: a lock released by a static destructor at exit still
// finds a sink.
MessageSink& Sink() {
  static MessageSink* sink = new MessageSink(WriteMessageToStderr);
  return *sink;
}

}  // namespace

MessageSink SetMessageSink(MessageSink sink) {
  std::lock_guard<std::mutex> guard(SinkMutex());
  return std::exchange(Sink(), std::move(sink));
}

void WriteMessageToStderr(const Message& message) {
  // One write(2) of the whole line, so that threads and other processes
  // sharing the stream cannot split it; stdio's buffer is flushed first so
  // that the line lands after what the program already printed.
  std::string line = message.text + "\n";
  fflush(stderr);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = write(STDERR_FILENO, p, left);
    if (n <= 0) break;  // a closed stderr has nowhere to report to
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void EmitMessage(MessageSeverity severity, absl::string_view text) {
  MessageSink sink;
  {
    // A copy, called outside the mutex: a sink may take its time, or set
    // another sink.
    std::lock_guard<std::mutex> guard(SinkMutex());
    sink = Sink();
  }
  if (sink) sink(Message{severity, std::string(text)});
}

}  // namespace ipclock
