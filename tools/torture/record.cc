// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "torture/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace ipclock_torture {

namespace {

void Report(Record* record, std::atomic<uint64_t>* counter, const char* kind,
            const char* format, va_list args) {
  counter->fetch_add(1);
  uint32_t index = record->message_count.fetch_add(1);
  if (index >= static_cast<uint32_t>(kMaxMessages)) return;
  char* out = record->messages[index];
  int n = snprintf(out, kMessageBytes, "%s: ", kind);
  if (n < 0 || n >= kMessageBytes) return;
  vsnprintf(out + n, static_cast<size_t>(kMessageBytes - n), format, args);
}

}  // namespace

Record* MapRecord() {
  void* p = mmap(nullptr, sizeof(Record), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("torture: mmap");
    abort();
  }
  return new (p) Record();
}

void UnmapRecord(Record* record) {
  record->~Record();
  munmap(record, sizeof(Record));
}

namespace {

Record* MapFile(const char* path, int flags) {
  const int fd = open(path, flags | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    fprintf(stderr, "torture: open %s: %s\n", path, strerror(errno));
    return nullptr;
  }
  if ((flags & O_CREAT) != 0 && ftruncate(fd, sizeof(Record)) != 0) {
    fprintf(stderr, "torture: ftruncate %s: %s\n", path, strerror(errno));
    close(fd);
    return nullptr;
  }
  void* p = mmap(nullptr, sizeof(Record), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    fprintf(stderr, "torture: mmap %s: %s\n", path, strerror(errno));
    return nullptr;
  }
  // A fresh file is zeroes, which is what a constructed Record holds (its
  // atomics are lock-free): construct it only once, in the creator.
  return (flags & O_CREAT) != 0 ? new (p) Record() : static_cast<Record*>(p);
}

}  // namespace

Record* CreateRecordFile(const char* path) { return MapFile(path, O_CREAT | O_EXCL); }

Record* MapRecordFile(const char* path) { return MapFile(path, 0); }

void UnmapRecordFile(Record* record) { munmap(record, sizeof(Record)); }

void StoreMax(std::atomic<int64_t>* target, int64_t value) {
  int64_t seen = target->load();
  while (value > seen && !target->compare_exchange_weak(seen, value)) {
  }
}

void ReportViolation(Record* record, const char* format, ...) {
  va_list args;
  va_start(args, format);
  Report(record, &record->violations, "VIOLATION", format, args);
  va_end(args);
}

void ReportError(Record* record, const char* format, ...) {
  va_list args;
  va_start(args, format);
  Report(record, &record->errors, "error", format, args);
  va_end(args);
}

}  // namespace ipclock_torture
