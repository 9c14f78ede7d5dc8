// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The `etcd://` and `etcds://` DSNs (include/ipclock/stores/etcd_store.h), the
// store's factory and `EtcdHeldKeyOf()`. Compiled in every build: without
// the `etcd` feature, `NewEtcdStore()` is Unimplemented here.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/lock_access.h"
#include "core/named_file.h"
#include "core/options_driver.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "stores/etcd/etcd_store.h"
#if IPCLOCK_HAVE_ETCD
#include "stores/etcd/etcd_lock.h"
#endif
#if IPCLOCK_HAVE_ETCD_TLS
#include "platform/tls_stream.h"
#endif

namespace ipclock {

namespace {

constexpr int kDefaultPort = 2379;
// etcd's own bound on a lease's TTL is far above this; a year is plenty.
constexpr int64_t kMaxTtlSeconds = 365 * 24 * 3600;
// As for every store's timeouts: a longer one is a typo, not a wait.
constexpr absl::Duration kMaxTimeout = absl::Hours(1);

}  // namespace

#if !IPCLOCK_HAVE_ETCD
absl::StatusOr<std::shared_ptr<Store>> NewEtcdStore(const EtcdStoreOptions&) {
  return StoreNotInThisBuild(kEtcdEntry, "");
}

std::optional<EtcdHeldKey> EtcdHeldKeyOf(const Lock&) { return std::nullopt; }
#else

namespace {

// "host:port[,host:port...]" or "[v6]:port".
absl::StatusOr<std::vector<EtcdEndpoint>> ParseEndpoints(const std::string& where,
                                                         const std::string& text) {
  std::vector<EtcdEndpoint> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    EtcdEndpoint e;
    HostPortText split = SplitHostPort(part);
    if (split.malformed) {
      return ConfigurationError(where, "",
                                absl::StrCat("endpoint \"", absl::CHexEscape(part),
                                             "\": expected [address]:port, with its ']'"));
    }
    e.host = std::move(split.host);
    e.port = kDefaultPort;
    // "host:" takes the default port, as "host" does.
    if (split.port && !split.port->empty()) {
      const std::optional<int> port = PortNumber(*split.port);
      if (!port) {
        return ConfigurationError(
            where, "",
            absl::StrCat("endpoint \"", part, "\": the port must be from 1 to 65535"));
      }
      e.port = *port;
    }
    // A host the resolver would refuse as if the network were down.
    if (!IsHostName(e.host)) {
      return ConfigurationError(where, "",
                                absl::StrCat("endpoint \"", absl::CHexEscape(part),
                                             "\": expected a host name or an IP address"));
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

absl::StatusOr<EtcdSetup> CheckEtcdOptions(const EtcdStoreOptions& options) {
  EtcdSetup setup;
  const std::string scheme = options.tls ? "etcds" : "etcd";
  std::string prefix = options.prefix;
  while (!prefix.empty() && prefix.front() == '/') prefix.erase(0, 1);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  setup.prefix = prefix;
  setup.describe = absl::StrCat(scheme, "://", options.endpoints, "/", prefix);
  const std::string& describe = setup.describe;
  if (options.endpoints.empty()) {
    return ConfigurationError(describe, "", "no endpoint given");
  }
  absl::StatusOr<std::vector<EtcdEndpoint>> endpoints = ParseEndpoints(describe, options.endpoints);
  if (!endpoints.ok()) return endpoints.status();
  if (options.ttl < absl::Seconds(1) || options.ttl > absl::Seconds(kMaxTtlSeconds) ||
      options.ttl != absl::Trunc(options.ttl, absl::Seconds(1))) {
    return ConfigurationError(describe, "",
                              "ttl must be a whole number of seconds from 1 to 31536000 (etcd "
                              "leases count in seconds)");
  }
  if (options.connect_timeout <= absl::ZeroDuration() ||
      options.request_timeout <= absl::ZeroDuration() ||
      options.connect_timeout > kMaxTimeout || options.request_timeout > kMaxTimeout) {
    return ConfigurationError(describe, "",
                              "connect_timeout and timeout must be more than 0 and at most 1 h");
  }
  if (options.tls) {
#if IPCLOCK_HAVE_ETCD_TLS
    // Before mbedTLS reads them: a FIFO would block its read, a device or a
    // /proc file would be read as a certificate.
    const struct {
      absl::string_view option;
      const std::string& path;
    } files[] = {{"cacert", options.ca_file},
                 {"cert", options.cert_file},
                 {"key", options.key_file}};
    for (const auto& f : files) {
      if (f.path.empty()) continue;
      if (absl::Status s = CheckNamedFile(describe, absl::StrCat("option ", f.option, "=", f.path),
                                          f.path, FileKind::kRegularFile,
                                          IfMissing::kConfiguration);
          !s.ok()) {
        return s;
      }
    }
#else
    return NotBuiltError(describe, "",
                         "etcds:// needs mbedTLS's TLS and X.509 libraries, which this build "
                         "was made without (libmbedtls-dev)");
#endif
  } else if (!options.ca_file.empty() || !options.cert_file.empty() ||
             !options.key_file.empty()) {
    return ConfigurationError(describe, "",
                              "certificates are for etcds:// (TLS), not etcd://");
  }
  setup.client.endpoints = *std::move(endpoints);
  setup.client.connect_timeout = options.connect_timeout;
  return setup;
}

absl::StatusOr<EtcdSetup> EtcdSetupOf(const EtcdStoreOptions& options) {
  absl::StatusOr<EtcdSetup> setup = CheckEtcdOptions(options);
  if (!setup.ok()) return setup;
  if (options.tls) {
#if IPCLOCK_HAVE_ETCD_TLS
    TlsClientOptions tls;
    tls.ca_file = options.ca_file;
    tls.cert_file = options.cert_file;
    tls.key_file = options.key_file;
    tls.verify = options.verify_server;
    absl::StatusOr<std::shared_ptr<const TlsClientConfig>> config = LoadTlsClientConfig(tls);
    if (!config.ok()) {
      return Restated(config.status(), setup->describe, "", config.status().message());
    }
    setup->client.tls = *std::move(config);
#endif
  }
  return setup;
}

absl::StatusOr<std::shared_ptr<Store>> NewEtcdStore(const EtcdStoreOptions& options) {
  absl::StatusOr<EtcdSetup> setup = EtcdSetupOf(options);
  if (!setup.ok()) return setup.status();
  EtcdStoreOptions fixed = options;
  fixed.prefix = setup->prefix;
  auto store = std::make_shared<EtcdStore>(fixed, std::move(setup->client), setup->describe);
  if (absl::Status s = store->Start(); !s.ok()) {
    return Restated(s, setup->describe, "", absl::StrCat("grant a lease: ", s.message()));
  }
  return std::shared_ptr<Store>(std::move(store));
}

std::optional<EtcdHeldKey> EtcdHeldKeyOf(const Lock& lock) {
  if (!lock.is_acquired() || lock.store().name() != "etcd") return std::nullopt;
  // The name says which class it is (no RTTI in ipclock).
  const EtcdStore& store = static_cast<const EtcdStore&>(lock.store());
  return store.HeldKey(internal::LockAccess::key(lock));
}

#endif  // IPCLOCK_HAVE_ETCD

absl::StatusOr<EtcdStoreOptions> EtcdOptionsFromDsn(Dsn& dsn) {
  const bool tls = dsn.scheme() == "etcds";
  if (!dsn.has_authority() || dsn.host().empty()) {
    return BadDsn(dsn, absl::StrCat("expected ", dsn.scheme(),
                                    "://host:port[,host:port...][/prefix]"));
  }
  if (!dsn.user().empty() || dsn.has_password()) {
    return BadDsn(dsn, "etcd user:password authentication is not supported; use etcds:// "
                       "with a client certificate (cert=, key=)");
  }
  EtcdStoreOptions options;
  options.tls = tls;
  absl::StatusOr<std::string> endpoints = ServerListText(dsn, kDefaultPort);
  if (!endpoints.ok()) return endpoints.status();
  options.endpoints = *std::move(endpoints);
  // No path: the default prefix; "/" alone: no prefix.
  if (!dsn.path().empty()) {
    std::string prefix = dsn.path();
    while (!prefix.empty() && prefix.front() == '/') prefix.erase(0, 1);
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    options.prefix = prefix;
  }
  absl::StatusOr<long> ttl = dsn.TakeInt("ttl", 60, 1, kMaxTtlSeconds);
  if (!ttl.ok()) return ttl.status();
  options.ttl = absl::Seconds(*ttl);
  const double max_timeout = absl::ToDoubleSeconds(kMaxTimeout);
  absl::StatusOr<double> connect_timeout = dsn.TakeSeconds("connect_timeout", 5, max_timeout);
  if (!connect_timeout.ok()) return connect_timeout.status();
  absl::StatusOr<double> timeout = dsn.TakeSeconds("timeout", 5, max_timeout);
  if (!timeout.ok()) return timeout.status();
  if (*connect_timeout <= 0 || *timeout <= 0) {
    return BadDsn(dsn, "connect_timeout and timeout must be positive");
  }
  options.connect_timeout = absl::Seconds(*connect_timeout);
  options.request_timeout = absl::Seconds(*timeout);
  std::optional<std::string> cacert = dsn.TakeOption("cacert");
  std::optional<std::string> cert = dsn.TakeOption("cert");
  std::optional<std::string> key = dsn.TakeOption("key");
  absl::StatusOr<bool> insecure = dsn.TakeBool("insecure_skip_tls_verify", false);
  if (!insecure.ok()) return insecure.status();
  if (!tls && (cacert || cert || key || *insecure)) {
    return BadDsn(dsn, "cacert=, cert=, key= and insecure_skip_tls_verify= are for "
                       "etcds:// (TLS)");
  }
  if (cert.has_value() != key.has_value()) {
    return BadDsn(dsn, "a client certificate (cert=) needs its key (key=), and a key its "
                       "certificate");
  }
  options.ca_file = cacert.value_or("");
  options.cert_file = cert.value_or("");
  options.key_file = key.value_or("");
  options.verify_server = !*insecure;
  return options;
}

#if IPCLOCK_HAVE_ETCD
// Its DSN check reads each endpoint and certificate file, without
// connecting or loading a certificate (CheckEtcdOptions()).
const StoreDriver kEtcdDriver = {
    &PrepareFromOptions<&EtcdOptionsFromDsn, &CheckEtcdOptions, &EtcdCapabilities, &NewEtcdStore>,
    &ListEtcdLocks};
#endif

}  // namespace ipclock
