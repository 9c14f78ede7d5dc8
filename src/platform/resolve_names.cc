// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/resolve_names.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "platform/condition_wait.h"
#include "platform/thread.h"

namespace ipclock {
namespace {

// At most this many lookups at once, as glibc's own getaddrinfo_a() runs
// (20 threads); a list of thousands of names is worked through by them.
constexpr size_t kMaxResolverThreads = 16;

// Small stacks: a lookup needs little (glibc's resolver keeps its buffers
// on the heap beyond 64 KiB), and each thread otherwise reserves 8 MiB.
constexpr size_t kResolverStackBytes = 256 * 1024;

// The names of one call and their answers, shared by the caller and its
// resolver threads. A caller that gives up at its deadline leaves; the
// threads finish the lookup each is in (getaddrinfo() cannot be stopped),
// take no other, and the last one out frees this.
//
// Not getaddrinfo_a(): with glibc 2.36, a second batch of requests after a
// first one whose names failed at once crashed in its notification code
// (__gai_notify walking a waiter list left behind by gai_suspend()), in
// most runs of a retried ZooKeeper open, and its threads are not visible
// to ThreadSanitizer.
struct Batch {
  std::mutex mu;
  std::condition_variable answered;
  std::vector<std::string> names;
  std::vector<ResolvedName> results;
  std::vector<bool> done;
  size_t next = 0;       // the next name no thread has taken
  size_t remaining = 0;  // names without an answer yet
  bool abandoned = false;
};

bool IsNumericAddress(const std::string& name) {
  unsigned char buf[16];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

std::vector<std::string> NumericAddresses(const struct addrinfo* list) {
  std::vector<std::string> out;
  for (const struct addrinfo* a = list; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* where = nullptr;
    if (a->ai_family == AF_INET) {
      where = &reinterpret_cast<const struct sockaddr_in*>(a->ai_addr)->sin_addr;
    } else if (a->ai_family == AF_INET6) {
      where = &reinterpret_cast<const struct sockaddr_in6*>(a->ai_addr)->sin6_addr;
    }
    if (where == nullptr || inet_ntop(a->ai_family, where, text, sizeof text) == nullptr) {
      continue;
    }
    if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
  }
  return out;
}

// One name, answered as ResolvedName says.
ResolvedName Resolve(const std::string& name) {
  // As the ZooKeeper client asks: addresses of families this host has
  // configured, for TCP.
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  hints.ai_flags = AI_ADDRCONFIG;
  ResolvedName r;
  struct addrinfo* list = nullptr;
  const int rc = getaddrinfo(name.c_str(), nullptr, &hints, &list);
  if (rc != 0) {
    r.error = gai_strerror(rc);
    return r;
  }
  r.addresses = NumericAddresses(list);
  if (r.addresses.empty()) r.error = "no IPv4 or IPv6 address";
  freeaddrinfo(list);
  return r;
}

// A resolver thread: takes names until none is left or the caller left.
void ResolveTaken(const std::shared_ptr<Batch>& batch) {
  std::unique_lock<std::mutex> lock(batch->mu);
  while (!batch->abandoned && batch->next < batch->names.size()) {
    const size_t i = batch->next++;
    lock.unlock();
    ResolvedName r = Resolve(batch->names[i]);
    lock.lock();
    batch->results[i] = std::move(r);
    batch->done[i] = true;
    --batch->remaining;
    batch->answered.notify_all();
  }
}

}  // namespace

std::vector<ResolvedName> ResolveNames(const std::vector<std::string>& names,
                                       MonotonicDeadline deadline) {
  std::vector<ResolvedName> out(names.size());
  auto batch = std::make_shared<Batch>();
  std::vector<size_t> index;  // batch->names[i] is names[index[i]]
  for (size_t i = 0; i < names.size(); ++i) {
    if (IsNumericAddress(names[i])) {
      out[i].addresses.push_back(names[i]);
      continue;
    }
    batch->names.push_back(names[i]);
    index.push_back(i);
  }
  const size_t n = batch->names.size();
  if (n == 0) return out;
  batch->results.resize(n);
  batch->done.assign(n, false);
  batch->remaining = n;

  size_t started = 0;
  for (; started < std::min(n, kMaxResolverThreads); ++started) {
    pthread_t thread;
    if (!StartThread("ipclock-resolve", [batch] { ResolveTaken(batch); }, &thread,
                     kResolverStackBytes)
             .ok()) {
      break;
    }
    DetachThread(thread);
  }
  std::unique_lock<std::mutex> lock(batch->mu);
  if (started == 0) {
    // No thread could be made (a process at its limit): one name after
    // another here, without the deadline, rather than none.
    lock.unlock();
    ResolveTaken(batch);
    lock.lock();
  }
  WaitOnCondition(batch->answered, lock, deadline, [&] { return batch->remaining == 0; });
  for (size_t i = 0; i < n; ++i) {
    ResolvedName& r = out[index[i]];
    if (batch->done[i]) {
      r = std::move(batch->results[i]);
    } else {
      r.error = "no answer from the resolver in the time given";
    }
  }
  batch->abandoned = true;
  return out;
}

}  // namespace ipclock
