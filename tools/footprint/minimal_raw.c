/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * minimal.c without ipclock: the same lock in a flock store taken by hand
 * (open, flock, close of the file the flock store would use), so that what
 * ipclock adds to a program is the difference between the two
 * (tools/footprint.sh, tools/bench).
 *
 * Usage: minimal_raw LOCKDIR   (exits 0 if the lock was taken)
 */

/* O_CLOEXEC, under -std=c11 */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

int main(int argc, char **argv) {
  char path[512];
  if (argc != 2) {
    fprintf(stderr, "usage: minimal_raw LOCKDIR\n");
    return 64;
  }
  snprintf(path, sizeof path, "%s/sf.footprint.lock", argv[1]);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    perror(path);
    return 1;
  }
  int failed = flock(fd, LOCK_EX) != 0 || flock(fd, LOCK_UN) != 0;
  if (failed) perror(path);
  close(fd);
  return failed;
}
