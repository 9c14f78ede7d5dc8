// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/resolve_names.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <memory>
#include <mutex>

#if defined(__SANITIZE_THREAD__)
#define IPCLOCK_RESOLVE_ONE_BY_ONE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IPCLOCK_RESOLVE_ONE_BY_ONE 1
#endif
#endif

namespace ipclock {
namespace {

// One name's request to getaddrinfo_a(): glibc's thread reads the name and
// the hints and writes the result into `cb` until the lookup is over, so
// none of it may move or be freed before then.
struct Lookup {
  std::string name;
  struct addrinfo hints = {};
  struct gaicb cb = {};
};

using Batch = std::vector<std::unique_ptr<Lookup>>;

// Lookups still under way when their caller gave up on them, kept until
// glibc is done with them. Never destroyed: a lookup may outlast main().
std::mutex& AbandonedMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
std::vector<Batch>& Abandoned() {
  static std::vector<Batch>* batches = new std::vector<Batch>;
  return *batches;
}

bool InProgress(const Lookup& l) { return gai_error(const_cast<gaicb*>(&l.cb)) == EAI_INPROGRESS; }

void FreeResult(Lookup& l) {
  if (l.cb.ar_result != nullptr) freeaddrinfo(l.cb.ar_result);
  l.cb.ar_result = nullptr;
}

// Frees the abandoned lookups that have ended since.
void ReapAbandoned() {
  std::lock_guard<std::mutex> guard(AbandonedMutex());
  std::vector<Batch>& batches = Abandoned();
  batches.erase(std::remove_if(batches.begin(), batches.end(),
                               [](Batch& b) {
                                 for (const std::unique_ptr<Lookup>& l : b) {
                                   if (InProgress(*l)) return false;
                                 }
                                 for (std::unique_ptr<Lookup>& l : b) FreeResult(*l);
                                 return true;
                               }),
                batches.end());
}

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

}  // namespace

std::vector<ResolvedName> ResolveNames(const std::vector<std::string>& names,
                                       MonotonicDeadline deadline) {
  ReapAbandoned();
  std::vector<ResolvedName> out(names.size());
  Batch batch;
  std::vector<size_t> index;  // batch[i] resolves names[index[i]]
  for (size_t i = 0; i < names.size(); ++i) {
    if (IsNumericAddress(names[i])) {
      out[i].addresses.push_back(names[i]);
      continue;
    }
    auto l = std::make_unique<Lookup>();
    l->name = names[i];
    // As the ZooKeeper client asks: addresses of families this host has
    // configured, for TCP.
    l->hints.ai_family = AF_UNSPEC;
    l->hints.ai_socktype = SOCK_STREAM;
    l->hints.ai_protocol = IPPROTO_TCP;
    l->hints.ai_flags = AI_ADDRCONFIG;
    l->cb.ar_name = l->name.c_str();
    l->cb.ar_request = &l->hints;
    batch.push_back(std::move(l));
    index.push_back(i);
  }
  if (batch.empty()) return out;
#ifdef IPCLOCK_RESOLVE_ONE_BY_ONE
  // ThreadSanitizer does not see the threads glibc starts for
  // getaddrinfo_a() (they are not made through the pthread_create it
  // intercepts), and they crash in its runtime: its build resolves one name
  // after another, without the deadline.
  for (size_t i = 0; i < batch.size(); ++i) {
    ResolvedName& r = out[index[i]];
    struct addrinfo* list = nullptr;
    const int rc = getaddrinfo(batch[i]->name.c_str(), nullptr, &batch[i]->hints, &list);
    if (rc != 0) {
      r.error = gai_strerror(rc);
      continue;
    }
    r.addresses = NumericAddresses(list);
    if (r.addresses.empty()) r.error = "no IPv4 or IPv6 address";
    freeaddrinfo(list);
  }
  return out;
#endif
  std::vector<struct gaicb*> requests;
  for (std::unique_ptr<Lookup>& l : batch) requests.push_back(&l->cb);
  // EAI_AGAIN: some could not be queued; each request's gai_error() says
  // which, and those are reported as not resolved below.
  getaddrinfo_a(GAI_NOWAIT, requests.data(), static_cast<int>(requests.size()), nullptr);
  for (;;) {
    std::vector<const struct gaicb*> waiting;
    for (const std::unique_ptr<Lookup>& l : batch) {
      if (InProgress(*l)) waiting.push_back(&l->cb);
    }
    if (waiting.empty()) break;
    struct timespec left = {};
    if (!deadline.is_never()) {
      const int64_t nanos = deadline.nanos() - MonotonicNowNanos();
      if (nanos <= 0) break;
      left.tv_sec = static_cast<time_t>(nanos / 1000000000);
      left.tv_nsec = static_cast<long>(nanos % 1000000000);
    }
    // Returns when one lookup has ended, at the timeout, or on a signal:
    // the loop looks again either way.
    gai_suspend(waiting.data(), static_cast<int>(waiting.size()),
                deadline.is_never() ? nullptr : &left);
  }
  bool abandoned = false;
  for (size_t i = 0; i < batch.size(); ++i) {
    Lookup& l = *batch[i];
    ResolvedName& r = out[index[i]];
    if (InProgress(l)) gai_cancel(&l.cb);
    const int rc = gai_error(&l.cb);
    if (rc == 0) {
      r.addresses = NumericAddresses(l.cb.ar_result);
      if (r.addresses.empty()) r.error = "no IPv4 or IPv6 address";
      FreeResult(l);
    } else if (rc == EAI_INPROGRESS || rc == EAI_CANCELED) {
      r.error = "no answer from the resolver in the time given";
      abandoned = abandoned || rc == EAI_INPROGRESS;
    } else {
      r.error = gai_strerror(rc);
    }
  }
  if (abandoned) {
    std::lock_guard<std::mutex> guard(AbandonedMutex());
    Abandoned().push_back(std::move(batch));
  }
  return out;
}

}  // namespace ipclock
