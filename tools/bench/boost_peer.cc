// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// THE BOOST.INTERPROCESS PEER, NOT IPCLOCK. Built with -fexceptions as its
// own small library (see meson.build) because Boost throws; ipclock and the
// rest of the benchmark stay -fno-exceptions. Every Boost call is inside a
// try block here, and no exception leaves this file.

#include "boost_peer.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>

#include <boost/interprocess/sync/file_lock.hpp>
#include <boost/interprocess/sync/named_mutex.hpp>
#include <boost/interprocess/sync/named_semaphore.hpp>

#include "absl/strings/str_cat.h"

namespace ipclock_bench {

namespace bip = boost::interprocess;

namespace {

std::string PeerName(const char* what) {
  return absl::StrCat("ipclock-bench-boost-", what, ".", getpid());
}

// Times `make()` (a fresh object per operation when `fresh`, else one kept
// for all), `take(obj)` and `give(obj)`; -1 if Boost threw or a take failed.
template <typename Make, typename Take, typename Give>
double Time(const RunShape& shape, bool fresh, Make make, Take take, Give give) {
  try {
    auto kept = make();  // also makes the resource exist before timing
    return MedianNsPerOp(shape, [&](int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        if (fresh) {
          auto obj = make();
          if (!take(*obj)) return false;
          give(*obj);
        } else {
          if (!take(*kept)) return false;
          give(*kept);
        }
      }
      return true;
    });
  } catch (...) {
    return -1;
  }
}

double NamedMutex(const RunShape& shape, bool fresh) {
  const std::string name = PeerName(fresh ? "mutex" : "mutex-kept");
  double ns = Time(
      shape, fresh,
      [&] { return std::make_unique<bip::named_mutex>(bip::open_or_create, name.c_str()); },
      [](bip::named_mutex& mu) { mu.lock(); return true; },
      [](bip::named_mutex& mu) { mu.unlock(); });
  bip::named_mutex::remove(name.c_str());
  return ns;
}

double FileLock(const RunShape& shape, const std::string& dir, bool fresh) {
  const std::string path = absl::StrCat(dir, fresh ? "/boost-cycle.lock" : "/boost-kept.lock");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  close(fd);
  double ns = Time(
      shape, fresh, [&] { return std::make_unique<bip::file_lock>(path.c_str()); },
      [](bip::file_lock& lock) { return lock.try_lock(); },
      [](bip::file_lock& lock) { lock.unlock(); });
  unlink(path.c_str());
  return ns;
}

double NamedSemaphore(const RunShape& shape, bool fresh) {
  const std::string name = PeerName(fresh ? "sem" : "sem-kept");
  double ns = Time(
      shape, fresh,
      [&] {
        return std::make_unique<bip::named_semaphore>(bip::open_or_create, name.c_str(), 1);
      },
      [](bip::named_semaphore& sem) { return sem.try_wait(); },
      [](bip::named_semaphore& sem) { sem.post(); });
  bip::named_semaphore::remove(name.c_str());
  return ns;
}

}  // namespace

double BoostNamedMutexCycle(const RunShape& shape) { return NamedMutex(shape, true); }
double BoostNamedMutexPair(const RunShape& shape) { return NamedMutex(shape, false); }
double BoostFileLockCycle(const RunShape& shape, const std::string& dir) {
  return FileLock(shape, dir, true);
}
double BoostFileLockPair(const RunShape& shape, const std::string& dir) {
  return FileLock(shape, dir, false);
}
double BoostNamedSemaphoreCycle(const RunShape& shape) { return NamedSemaphore(shape, true); }
double BoostNamedSemaphorePair(const RunShape& shape) { return NamedSemaphore(shape, false); }

}  // namespace ipclock_bench
