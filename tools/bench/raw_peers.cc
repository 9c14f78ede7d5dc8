// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "raw_peers.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ipclock_bench {

pthread_mutex_t* MapRobustMutex(bool priority_inheritance) {
  void* mem = mmap(nullptr, sizeof(pthread_mutex_t), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* mu = static_cast<pthread_mutex_t*>(mem);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  if (priority_inheritance) pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
  pthread_mutex_init(mu, &attr);
  pthread_mutexattr_destroy(&attr);
  return mu;
}

void UnmapRobustMutex(pthread_mutex_t* mu) {
  pthread_mutex_destroy(mu);
  munmap(mu, sizeof(pthread_mutex_t));
}

double RawRobustMutexPair(const RunShape& shape) {
  pthread_mutex_t* mu = MapRobustMutex();
  if (mu == nullptr) return -1;
  const double ns = MedianNsPerPair(
      shape, [&] { return pthread_mutex_lock(mu) == 0; }, [&] { pthread_mutex_unlock(mu); });
  UnmapRobustMutex(mu);
  return ns;
}

double RawFlockPair(const RunShape& shape, const std::string& dir) {
  std::string path = absl::StrCat(dir, "/raw-pair.lock");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  const double ns = MedianNsPerPair(
      shape, [&] { return flock(fd, LOCK_EX | LOCK_NB) == 0; }, [&] { flock(fd, LOCK_UN); });
  close(fd);
  unlink(path.c_str());
  return ns;
}

double RawOpenFlockClose(const RunShape& shape, const std::string& dir) {
  std::string path = absl::StrCat(dir, "/raw-cycle.lock");
  int made = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (made < 0) return -1;
  close(made);
  double ns = MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) return false;
      close(fd);
    }
    return true;
  });
  unlink(path.c_str());
  return ns;
}

double RawOpenFlockCloseOver(const RunShape& shape, const std::string& dir, int files) {
  const std::string sweep = absl::StrCat(dir, "/raw-sweep.", files);
  if (mkdir(sweep.c_str(), 0700) != 0 && errno != EEXIST) return -1;
  std::vector<std::string> paths;
  paths.reserve(files);
  for (int i = 0; i < files; ++i) {
    paths.push_back(absl::StrCat(sweep, "/", i, ".lock"));
    int made = open(paths.back().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (made < 0) return -1;
    close(made);
  }
  size_t next = 0;
  double ns = MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int fd = open(paths[next].c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) return false;
      close(fd);
      if (++next == paths.size()) next = 0;
    }
    return true;
  });
  for (const std::string& p : paths) unlink(p.c_str());
  rmdir(sweep.c_str());
  return ns;
}

double RawSemopPair(const RunShape& shape) {
  int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
  if (id < 0) return -1;
  sembuf up = {0, 1, SEM_UNDO};
  semop(id, &up, 1);  // one permit
  double ns = MedianNsPerOp(shape, [&](int64_t n) {
    sembuf take = {0, -1, IPC_NOWAIT | SEM_UNDO};
    sembuf give = {0, 1, SEM_UNDO};
    for (int64_t i = 0; i < n; ++i) {
      if (semop(id, &take, 1) != 0) return false;
      semop(id, &give, 1);
    }
    return true;
  });
  semctl(id, 0, IPC_RMID);
  return ns;
}

double RawPosixSemPair(const RunShape& shape) {
  std::string name = absl::StrCat("/ipclock-bench-raw.", getpid());
  sem_t* sem = sem_open(name.c_str(), O_CREAT | O_EXCL, 0600, 1);
  if (sem == SEM_FAILED) return -1;
  sem_unlink(name.c_str());  // nothing left behind, even on a crash
  const double ns =
      MedianNsPerPair(shape, [&] { return sem_wait(sem) == 0; }, [&] { sem_post(sem); });
  sem_close(sem);
  return ns;
}

double ClockReadNs(const RunShape& shape, clockid_t clock) {
  return MedianNsPerOp(shape, [&](int64_t n) {
    struct timespec ts;
    for (int64_t i = 0; i < n; ++i) {
      if (clock_gettime(clock, &ts) != 0) return false;
      // Kept, so that the loop is not optimised away.
      asm volatile("" : : "r"(ts.tv_nsec) : "memory");
    }
    return true;
  });
}

}  // namespace ipclock_bench
