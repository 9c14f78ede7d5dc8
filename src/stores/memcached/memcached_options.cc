// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/memcached/memcached_options.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/capability_flags.h"
#include "core/named_file.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "stores/memcached/memcached_store.h"

namespace ipclock {

namespace {

// An expiry above 30 days is read by memcached as a Unix time.
constexpr int64_t kMaxRelativeExpiry = 30 * 24 * 3600;

}  // namespace

int64_t MemcachedExpiryFor(absl::Duration ttl) {
  const double seconds = std::ceil(absl::ToDoubleSeconds(ttl));
  return static_cast<int64_t>(std::max(seconds, 1.0)) + 1;
}

absl::Status CheckMemcachedLease(absl::string_view describe, absl::string_view resource,
                                 absl::Duration ttl) {
  // MemcachedExpiryFor(ttl) <= kMaxRelativeExpiry, without its arithmetic
  // on a duration too long for it.
  if (ttl <= absl::Seconds(kMaxRelativeExpiry - 1)) return absl::OkStatus();
  return ConfigurationError(
      describe, resource,
      absl::StrCat("the lease (LockOptions::ttl, --ttl) is ",
                   ttl == absl::InfiniteDuration() ? "without end, or too long to count"
                                                   : absl::FormatDuration(ttl),
                   ": expected at most 30 days, the longest lease memcached keeps (it reads "
                   "a longer expiry as a date)"));
}

Capabilities MemcachedCapabilities(const MemcachedStoreOptions& options) {
  // Waits poll; the token alone refreshes or releases (serializable). The
  // longest lease: MemcachedExpiryFor() sends ceil(ttl) + 1 seconds, which
  // must stay relative.
  return MakeCapabilities(kMemcachedEntry.scope,
                          kCanExpire | kCanSerialize | When(options.holder_record, kSeesOwnerDeath),
                          absl::Seconds(kMaxRelativeExpiry - 1));
}

absl::StatusOr<KeyNaming> MemcachedKeyNaming(const MemcachedStoreOptions& options,
                                             absl::string_view where) {
  KeyNamingOptions naming_options;
  naming_options.prefix = options.name_prefix;
  naming_options.secret = options.secret;
  naming_options.secret_none = !options.warn_without_secret;
  return KeyNaming::Create(std::move(naming_options), where);
}

absl::Status CheckMemcachedOptions(const MemcachedStoreOptions& options) {
  const std::string where = options.servers.empty()
                                ? std::string("memcached://")
                                : absl::StrCat("memcached://", options.servers[0].host);
  if (options.servers.empty()) {
    return ConfigurationError(where, "", "no server given");
  }
  for (const MemcachedStoreOptions::Server& s : options.servers) {
    if (s.host.empty()) {
      return ConfigurationError(where, "", "a server has no host");
    }
    if (s.host[0] != '/' && (s.port < 1 || s.port > 65535)) {
      return ConfigurationError(where, "",
                                "the port must be from 1 to 65535");
    }
    if (s.weight < 0) {
      return ConfigurationError(where, "",
                                "a server weight must be 0 or more");
    }
  }
  if (options.connect_timeout_ms < 0 || options.poll_timeout_ms < 0 ||
      options.send_timeout_us < 0 || options.recv_timeout_us < 0 ||
      options.retry_timeout_s < 0) {
    return ConfigurationError(where, "",
                              "timeouts must not be negative");
  }
  for (unsigned char c : options.prefix_key) {
    if (c <= 0x20 || c == 0x7f) {
      return ConfigurationError(where, "",
                                "prefix_key cannot hold spaces or control bytes");
    }
  }
  // libmemcached's own limit on its namespace.
  if (options.prefix_key.size() >= 128) {
    return ConfigurationError(where, "",
                              "prefix_key must be shorter than 128 bytes");
  }
  // libmemcached aborts the process (an assertion in its consistent
  // hashing) past 100 servers.
  if (options.servers.size() > kMemcachedMaxServers) {
    return ConfigurationError(where, "",
                              absl::StrCat(options.servers.size(),
                                           " servers: libmemcached takes at most ",
                                           kMemcachedMaxServers));
  }
  for (const MemcachedStoreOptions::Server& s : options.servers) {
    if (s.host[0] == '/') {
      if (absl::Status bad = CheckNamedFile(where, absl::StrCat("the Unix socket ", s.host),
                                            s.host, FileKind::kUnixSocket,
                                            IfMissing::kFine);
          !bad.ok()) {
        return bad;
      }
    } else if (!IsHostName(s.host)) {
      // Longer than libmemcached's limit, or a name it would not resolve.
      return ConfigurationError(where, "",
                                absl::StrCat("host \"", absl::CHexEscape(s.host.substr(0, 64)),
                                             s.host.size() > 64 ? "...\"" : "\"",
                                             ": expected a host name or an IP address"));
    }
  }
  return MemcachedKeyNaming(options, where).status();
}

}  // namespace ipclock
