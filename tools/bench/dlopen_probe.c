/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Times one dlopen() of a client library in a process that has loaded
 * nothing but libc: what a remote store's first use adds to a program
 * (src/platform/client_library.h), for tools/bench's start-up rows.
 *
 * Usage: dlopen_probe SONAME   (prints the nanoseconds; exit 1 if it failed)
 */

#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: dlopen_probe SONAME\n");
    return 64;
  }
  const long long start = now_ns();
  /* As the library loads it (platform/client_library.cc). */
  void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  const long long took = now_ns() - start;
  if (handle == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  printf("%lld\n", took);
  return 0;
}
