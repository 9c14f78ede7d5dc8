// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The `zookeeper://` DSN (include/ipclock/stores/zookeeper_store.h) and the store's
// factory. Compiled in every build: without the ZooKeeper C client,
// `NewZooKeeperStore()` is Unimplemented here.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/key_naming.h"
#include "core/options_driver.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "stores/zookeeper/zookeeper_store.h"
#if IPCLOCK_HAVE_ZOOKEEPER
#include "stores/zookeeper/zookeeper_lock.h"
#endif

namespace ipclock {

namespace {

constexpr int kDefaultPort = 2181;

}  // namespace

#if !IPCLOCK_HAVE_ZOOKEEPER
absl::StatusOr<std::shared_ptr<Store>> NewZooKeeperStore(const ZooKeeperStoreOptions&) {
  return StoreNotInThisBuild(kZooKeeperEntry, "libzookeeper-mt-dev");
}
#else

ZkServer ParseZkServer(absl::string_view server) {
  HostPortText split = SplitHostPort(server);
  if (split.malformed) return ZkServer{"", 0};
  return ZkServer{std::move(split.host), split.port ? PortNumber(*split.port).value_or(0) : 0};
}

absl::Status CheckZooKeeperOptions(const ZooKeeperStoreOptions& options) {
  const std::string where = absl::StrCat("zookeeper://", options.servers);
  if (options.servers.empty()) {
    return ConfigurationError(where, "", "no server given");
  }
  // The client's own parser reads a '/' as the start of a chroot and
  // resolves anything else it is given: each server is checked here.
  for (absl::string_view server : absl::StrSplit(options.servers, ',')) {
    const ZkServer parsed = ParseZkServer(server);
    if (!IsHostName(parsed.host) || parsed.port < 1 || parsed.port > 65535) {
      return ConfigurationError(where, "",
                                absl::StrCat("server \"", absl::CHexEscape(server),
                                             "\": expected host:port, with a host name or an IP "
                                             "address and a port from 1 to 65535"));
    }
  }
  if (!options.path.empty()) {
    if (options.path[0] != '/') {
      return ConfigurationError(where, "",
                                "the path must be absolute");
    }
    // The client refuses a path with an empty component (a doubled or a
    // trailing '/') as bad arguments, and only when a request is made.
    if (options.path != "/" &&
        (absl::StrContains(options.path, "//") || options.path.back() == '/')) {
      return ConfigurationError(
          where, "",
          absl::StrCat("path ", options.path, ": expected /name[/name...], "
                       "without an empty component (a doubled or trailing '/')"));
    }
    std::vector<absl::string_view> parts =
        absl::StrSplit(options.path, '/', absl::SkipEmpty());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (absl::Status s = ValidZooKeeperName(parts[i], i == 0); !s.ok()) {
        return ConfigurationError(where, "",
                                  absl::StrCat("path ", options.path, ": ", s.message()));
      }
    }
    if (parts.empty() && options.format == ZooKeeperStoreOptions::Format::kRecipe) {
      return ConfigurationError(where, "",
                                "the recipe format keeps one node per resource: give it a "
                                "path of its own (/ipclock by default), not the root");
    }
  }
  if (options.session_timeout < absl::Milliseconds(1) ||
      options.session_timeout > absl::Hours(24)) {
    return ConfigurationError(where, "",
                              "session_timeout must be from 1 ms to 24 h");
  }
  if (options.connect_timeout <= absl::ZeroDuration() ||
      options.connect_timeout > absl::Hours(1)) {
    return ConfigurationError(where, "",
                              "connect_timeout must be more than 0 and at most 1 h");
  }
  KeyNamingOptions naming_options;
  naming_options.prefix = options.name_prefix;
  naming_options.secret = options.secret;
  naming_options.secret_none = !options.warn_without_secret;
  return KeyNaming::Create(std::move(naming_options), where).status();
}

absl::StatusOr<std::shared_ptr<Store>> NewZooKeeperStore(const ZooKeeperStoreOptions& options) {
  if (absl::Status s = ZooKeeperLibrary().Load(kZooKeeperEntry.name); !s.ok()) return s;
  if (absl::Status s = CheckZooKeeperOptions(options); !s.ok()) return s;
  const std::string where = absl::StrCat("zookeeper://", options.servers);
  KeyNamingOptions naming_options;
  naming_options.prefix = options.name_prefix;
  naming_options.secret = options.secret;
  naming_options.secret_none = !options.warn_without_secret;
  absl::StatusOr<KeyNaming> naming = KeyNaming::Create(std::move(naming_options), where);
  if (!naming.ok()) return naming.status();
  auto store = std::make_shared<ZooKeeperStore>(options, *std::move(naming));
  if (absl::Status s = store->Start(); !s.ok()) return s;
  store->WarnIfNoSecret();
  return std::shared_ptr<Store>(std::move(store));
}

#endif  // IPCLOCK_HAVE_ZOOKEEPER

absl::StatusOr<ZooKeeperStoreOptions> ZooKeeperOptionsFromDsn(Dsn& dsn) {
  if (!dsn.has_authority() || dsn.host().empty()) {
    return BadDsn(dsn, "expected zookeeper://host:port[,host:port...][/path]");
  }
  if (!dsn.user().empty() || dsn.has_password()) {
    return BadDsn(dsn, "ZooKeeper authentication (user:password@) is not supported");
  }
  ZooKeeperStoreOptions options;
  absl::StatusOr<std::string> servers = ServerListText(dsn, kDefaultPort);
  if (!servers.ok()) return servers.status();
  options.servers = *std::move(servers);
  options.path = dsn.path();

  std::optional<std::string> format = dsn.TakeOption("format");
  if (format && *format != "recipe" && *format != "symfony") {
    return BadDsn(dsn, absl::StrCat("option format=", *format, ": expected recipe or symfony"));
  }
  if (format && *format == "symfony") options.format = ZooKeeperStoreOptions::Format::kSymfony;
  absl::StatusOr<double> session_timeout = dsn.TakeSeconds("session_timeout", 10, 24 * 3600);
  if (!session_timeout.ok()) return session_timeout.status();
  absl::StatusOr<double> connect_timeout = dsn.TakeSeconds("connect_timeout", 5, 3600);
  if (!connect_timeout.ok()) return connect_timeout.status();
  if (*session_timeout <= 0 || *connect_timeout <= 0) {
    return BadDsn(dsn, "session_timeout and connect_timeout must be positive");
  }
  options.session_timeout = absl::Seconds(*session_timeout);
  options.connect_timeout = absl::Seconds(*connect_timeout);
  absl::StatusOr<KeyNamingOptions> naming = PlainKeyNamingOptionsFromDsn(
      dsn, absl::StrCat("zookeeper://", options.servers), "ZooKeeper nodes");
  if (!naming.ok()) return naming.status();
  SetPlainKeyNaming(*naming, &options);
  return options;
}

#if IPCLOCK_HAVE_ZOOKEEPER
const StoreDriver kZooKeeperDriver = {
    &PrepareFromOptions<&ZooKeeperOptionsFromDsn, &CheckZooKeeperOptions, &ZooKeeperCapabilities,
                        &NewZooKeeperStore>,
    &ListZooKeeperLocks, &ZooKeeperLibrary};
#endif

}  // namespace ipclock
