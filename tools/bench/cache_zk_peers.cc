// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "cache_zk_peers.h"

#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "client_connect.h"
#include "ipclock_config.h"

#if IPCLOCK_HAVE_MEMCACHED
#include <libmemcached/memcached.h>
#endif
#if IPCLOCK_HAVE_ZOOKEEPER
// libzookeeper_mt declares its synchronous calls only for threaded builds.
#define THREADED 1
#include <zookeeper/zookeeper.h>
#endif

namespace ipclock_bench {

namespace {

// "host:port" of scheme://host:port[/...][?...].
std::string Authority(const std::string& dsn, absl::string_view scheme) {
  absl::string_view rest = dsn;
  if (!absl::ConsumePrefix(&rest, scheme)) return "";
  return std::string(rest.substr(0, rest.find_first_of("/?")));
}

#if IPCLOCK_HAVE_MEMCACHED
memcached_st* ConnectMemcached(const std::string& dsn, std::string* why) {
  std::string hp = Authority(dsn, "memcached://");
  size_t colon = hp.rfind(':');
  int port = 11211;
  if (colon != std::string::npos) (void)absl::SimpleAtoi(hp.substr(colon + 1), &port);
  const std::string host = colon == std::string::npos ? hp : hp.substr(0, colon);
  memcached_st* mc = memcached_create(nullptr);
  memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
  if (mc == nullptr ||
      memcached_server_add(mc, host.c_str(), static_cast<in_port_t>(port)) != MEMCACHED_SUCCESS ||
      memcached_version(mc) != MEMCACHED_SUCCESS) {
    return FailedConnect(mc, memcached_free, absl::StrCat("cannot reach memcached at ", hp), why);
  }
  return mc;
}
#endif

}  // namespace

double MemcachedVersion([[maybe_unused]] const RunShape& shape,
                        [[maybe_unused]] const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_MEMCACHED
  return MedianNsPerCall(shape, ConnectMemcached(dsn, why), memcached_free, [](memcached_st* mc) {
    return memcached_version(mc) == MEMCACHED_SUCCESS;
  });
#else
  return Unavailable(why, "built without libmemcached");
#endif
}

double MemcachedGetMissing([[maybe_unused]] const RunShape& shape,
                           [[maybe_unused]] const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_MEMCACHED
  const std::string key = absl::StrCat("bench-missing-", getpid());
  return MedianNsPerCall(shape, ConnectMemcached(dsn, why), memcached_free, [&](memcached_st* mc) {
    size_t len = 0;
    uint32_t flags = 0;
    memcached_return_t rc;
    char* v = memcached_get(mc, key.data(), key.size(), &len, &flags, &rc);
    free(v);
    return rc == MEMCACHED_NOTFOUND;
  });
#else
  return Unavailable(why, "built without libmemcached");
#endif
}

#if IPCLOCK_HAVE_ZOOKEEPER
namespace {

// A session with the servers of `dsn`, or nullptr with `*why` set.
zhandle_t* ConnectZooKeeper(const std::string& dsn, std::string* why) {
  const std::string servers = Authority(dsn, "zookeeper://");
  zoo_set_log_stream(fopen("/dev/null", "w"));
  zhandle_t* zh = zookeeper_init(servers.c_str(), nullptr, 10000, nullptr, nullptr, 0);
  for (int i = 0; zh != nullptr && i < 200 && zoo_state(zh) != ZOO_CONNECTED_STATE; ++i) {
    usleep(25000);
  }
  if (zh == nullptr || zoo_state(zh) != ZOO_CONNECTED_STATE) {
    return FailedConnect(zh, zookeeper_close, absl::StrCat("cannot reach ZooKeeper at ", servers),
                         why);
  }
  return zh;
}

}  // namespace
#endif

double ZooKeeperCreateDelete([[maybe_unused]] const RunShape& shape,
                             [[maybe_unused]] const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_ZOOKEEPER
  zhandle_t* zh = ConnectZooKeeper(dsn, why);
  if (zh == nullptr) return -1;
  const std::string path = absl::StrCat("/ipclock-bench-floor-", getpid());
  const double ns = MedianNsPerCall(shape, zh, zookeeper_close, [&](zhandle_t* z) {
    return zoo_create(z, path.c_str(), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, nullptr, 0) ==
               ZOK &&
           zoo_delete(z, path.c_str(), -1) == ZOK;
  });
  if (ns < 0) *why = "create or delete of an ephemeral node failed";
  return ns;
#else
  return Unavailable(why, "built without the ZooKeeper C client");
#endif
}

double ZooKeeperExists([[maybe_unused]] const RunShape& shape,
                       [[maybe_unused]] const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_ZOOKEEPER
  return MedianNsPerCall(shape, ConnectZooKeeper(dsn, why), zookeeper_close, [](zhandle_t* zh) {
    struct Stat stat;
    return zoo_exists(zh, "/", 0, &stat) == ZOK;
  });
#else
  return Unavailable(why, "built without the ZooKeeper C client");
#endif
}

}  // namespace ipclock_bench
