// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The `memcached://` DSN forms, read as Symfony's
// MemcachedAdapter::createConnection() reads them (see
// include/ipclock/stores/memcached_store.h). Compiled in every build: without
// libmemcached, `NewMemcachedStore()` is Unimplemented here.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/key_naming.h"
#include "core/options_driver.h"
#include "stores/memcached/memcached_store.h"
#if IPCLOCK_HAVE_MEMCACHED
#include "platform/memcached_calls.h"
#include "stores/memcached/memcached_options.h"
#endif

namespace ipclock {

#if !IPCLOCK_HAVE_MEMCACHED
absl::StatusOr<std::shared_ptr<Store>> NewMemcachedStore(const MemcachedStoreOptions&) {
  return StoreNotInThisBuild(kMemcachedEntry, "libmemcached-dev");
}
#else

namespace {

// "host:port" or "/socket[:]" from `host[...]`: the last ':' splits, as in
// Symfony, and brackets around an IPv6 address are dropped.
absl::Status ParseIndexedHost(const Dsn& dsn, const std::string& spec,
                              const std::string& weight,
                              MemcachedStoreOptions::Server* server) {
  HostPortText split = SplitHostPort(spec);
  std::string host = std::move(split.host);
  int port = 11211;
  if (split.port && !host.empty() && host[0] == '/') {
    port = 0;  // a socket path with Symfony's ':' after it
  } else if (split.port) {
    const std::optional<int> number = PortNumber(*split.port);
    if (!number) {
      return BadDsn(dsn, absl::StrCat("host[", spec, "]: the port must be a number "
                                      "from 1 to 65535"));
    }
    port = *number;
  }
  if (host.empty() || split.malformed) {
    return BadDsn(dsn, absl::StrCat("host[", spec, "]: no host"));
  }
  server->host = host;
  server->port = port;
  server->weight = 0;
  if (!weight.empty() && (!absl::SimpleAtoi(weight, &server->weight) || server->weight < 0)) {
    return BadDsn(dsn, absl::StrCat("host[", spec, "]=", weight,
                                    ": the weight must be a whole number, 0 or more"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> TakeCount(Dsn& dsn, absl::string_view name, int default_value) {
  absl::StatusOr<long> v = dsn.TakeInt(name, default_value, 0, INT32_MAX);
  if (!v.ok()) return v.status();
  return static_cast<int>(*v);
}

}  // namespace

namespace {

absl::StatusOr<MemcachedStoreOptions> MemcachedOptionsFromDsn(Dsn& dsn) {
  if (!dsn.user().empty() || dsn.has_password()) {
    return BadDsn(dsn, "user and password (SASL) need memcached's binary protocol, "
                       "which memcached deprecates; they are not supported");
  }
  MemcachedStoreOptions options;
  // The server of the authority or path, as Symfony reads them: a trailing
  // "/N" of the path is the server's weight.
  std::optional<MemcachedStoreOptions::Server> main;
  std::string path = dsn.path();
  int path_weight = -1;
  if (size_t slash = path.rfind('/'); slash != std::string::npos && slash + 1 < path.size()) {
    int w;
    if (absl::SimpleAtoi(path.substr(slash + 1), &w) && w >= 0 &&
        path.find_first_not_of("0123456789", slash + 1) == std::string::npos) {
      path_weight = w;
      path.resize(slash);
    }
  }
  if (dsn.has_authority() && !dsn.host().empty()) {
    if (!path.empty() && path != "/") {
      return BadDsn(dsn, "expected memcached://host[:port][/weight]");
    }
    main.emplace();
    main->host = dsn.host();
    main->port = dsn.port() != 0 ? dsn.port() : 11211;
  } else if (!path.empty() && path != "/") {
    if (path[0] != '/') {
      return BadDsn(dsn, "a Unix socket path must be absolute (memcached:///path/to.sock)");
    }
    main.emplace();
    main->host = path;
    main->port = 0;
  }
  absl::StatusOr<long> weight = dsn.TakeInt("weight", -1, 0, INT32_MAX);
  if (!weight.ok()) return weight.status();
  if (main) {
    main->weight = path_weight >= 0 ? path_weight : static_cast<int>(std::max<long>(*weight, 0));
    options.servers.push_back(*main);
  } else if (path_weight >= 0 || *weight >= 0) {
    return BadDsn(dsn, "a weight without a server");
  }
  for (const auto& [spec, w] : dsn.TakeIndexedOptions("host")) {
    MemcachedStoreOptions::Server server;
    if (absl::Status s = ParseIndexedHost(dsn, spec, w, &server); !s.ok()) return s;
    options.servers.push_back(std::move(server));
  }
  if (options.servers.size() > kMemcachedMaxServers) {
    return BadDsn(dsn, absl::StrCat(options.servers.size(), " servers (host[...] options): "
                                    "libmemcached takes at most ", kMemcachedMaxServers));
  }
  if (options.servers.empty()) {
    return BadDsn(dsn, "expected memcached://host[:port], memcached:///path/to.sock "
                       "or memcached:?host[host:port]=weight&...");
  }

  absl::StatusOr<int> n = TakeCount(dsn, "connect_timeout", options.connect_timeout_ms);
  if (!n.ok()) return n.status();
  options.connect_timeout_ms = *n;
  if (n = TakeCount(dsn, "poll_timeout", options.poll_timeout_ms); !n.ok()) return n.status();
  options.poll_timeout_ms = *n;
  if (n = TakeCount(dsn, "send_timeout", 0); !n.ok()) return n.status();
  options.send_timeout_us = *n;
  if (n = TakeCount(dsn, "recv_timeout", 0); !n.ok()) return n.status();
  options.recv_timeout_us = *n;
  if (n = TakeCount(dsn, "retry_timeout", options.retry_timeout_s); !n.ok()) return n.status();
  options.retry_timeout_s = *n;
  for (auto [name, field] : {std::pair<absl::string_view, bool*>{"tcp_nodelay", &options.tcp_nodelay},
                             {"no_block", &options.no_block},
                             {"libketama_compatible", &options.libketama_compatible}}) {
    absl::StatusOr<bool> b = dsn.TakeBool(name, *field);
    if (!b.ok()) return b.status();
    *field = *b;
  }
  absl::StatusOr<bool> binary = dsn.TakeBool("binary_protocol", false);
  if (!binary.ok()) return binary.status();
  if (*binary) {
    return BadDsn(dsn, "binary_protocol=true: memcached deprecates its binary "
                       "protocol; ipclock speaks the text protocol (locks are "
                       "the same keys either way)");
  }
  // A lock's value is a 44-byte string: PHP stores strings unserialized and
  // compresses only values over its threshold (2000 bytes), so these change
  // nothing for locks. Accepted so that one DSN serves both.
  if (std::optional<std::string> serializer = dsn.TakeOption("serializer");
      serializer && *serializer != "php" && *serializer != "igbinary" &&
      *serializer != "json" && *serializer != "json_array" && *serializer != "msgpack") {
    return BadDsn(dsn, absl::StrCat("option serializer=", *serializer,
                                    ": expected php, igbinary, json, json_array or msgpack"));
  }
  if (absl::StatusOr<bool> c = dsn.TakeBool("compression", true); !c.ok()) return c.status();
  options.prefix_key = dsn.TakeOption("prefix_key").value_or("");
  absl::StatusOr<bool> record = dsn.TakeBool("record", true);
  if (!record.ok()) return record.status();
  options.holder_record = *record;

  const std::string where = absl::StrCat("memcached://", options.servers[0].host);
  absl::StatusOr<KeyNamingOptions> naming =
      PlainKeyNamingOptionsFromDsn(dsn, where, "memcached keys");
  if (!naming.ok()) return naming.status();
  SetPlainKeyNaming(*naming, &options);
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return options;
}

}  // namespace

const StoreDriver kMemcachedDriver = {
    &PrepareFromOptions<&MemcachedOptionsFromDsn, &CheckMemcachedOptions, &MemcachedCapabilities,
                        &NewMemcachedStore>,
    nullptr, &MemcachedLibrary};

#endif  // IPCLOCK_HAVE_MEMCACHED

}  // namespace ipclock
