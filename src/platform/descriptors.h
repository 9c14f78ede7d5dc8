// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Keeping a lock's descriptors apart from the process's standard streams
// and from the programs it starts.
//
// A program started with stdin, stdout or stderr closed (`2>&-` in a shell,
// a daemon that closed them) gets the next descriptor it opens as that
// stream: a lock file, a shared-memory segment or a server's socket opened
// as fd 2 then receives whatever anybody writes to stderr, ipclock's own
// messages and a client library's included. A segment's header overwritten
// that way is "not an ipclock segment" for every later user; a socket's
// stream is corrupted mid-request. Filling the closed streams with
// /dev/null before anything is opened keeps every later descriptor at 3 or
// above, as glibc does at the start of a set-user-ID program.
//
// A descriptor that is not close-on-exec is inherited by every program the
// process starts: a database session's socket held open by a child keeps
// the session, and its advisory locks, alive after the process that took
// them died. ipclock opens its own with O_CLOEXEC; a client library that
// does not gets the flag set after it opened the socket.

#ifndef IPCLOCK_PLATFORM_DESCRIPTORS_H_
#define IPCLOCK_PLATFORM_DESCRIPTORS_H_

namespace ipclock {

// Opens /dev/null (not close-on-exec, as a standard stream) on each of
// descriptors 0, 1 and 2 that is closed. Three fcntl(2) calls when all are
// open. Safe to call any number of times; a descriptor another thread takes
// in between is left to it.
void FillClosedStdio();

// `fd` itself if it is above 2 (or negative); else a close-on-exec copy at
// 3 or above, `fd` being closed (a standard stream closed after
// FillClosedStdio() ran, and reopened by us). -1 with errno set if no copy
// could be made (then `fd` is closed too).
int AboveStdio(int fd);

// Sets FD_CLOEXEC on `fd` (a client library's socket or pipe). False if
// `fd` is not open.
bool SetCloseOnExec(int fd);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_DESCRIPTORS_H_
