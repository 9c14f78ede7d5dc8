// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// DSN parsing: `scheme[:[//[user[:password]@]host[:port]][/path][?query]]`.
// A bare word ("flock") is a scheme with nothing else. Components are
// percent-decoded; IPv6 hosts are written in brackets. Spaces, control bytes
// and NULs are refused, raw or percent-encoded, in every part: each part ends
// up in a C string (a path, a server's connection string) that a NUL would
// silently cut short.

#ifndef IPCLOCK_CORE_DSN_H_
#define IPCLOCK_CORE_DSN_H_

#include <sys/types.h>

#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ipclock {

class Dsn {
 public:
  static absl::StatusOr<Dsn> Parse(absl::string_view text);

  const std::string& scheme() const { return scheme_; }
  bool has_authority() const { return has_authority_; }
  const std::string& user() const { return user_; }
  const std::string& password() const { return password_; }
  bool has_password() const { return has_password_; }
  const std::string& host() const { return host_; }
  // 0 when absent.
  int port() const { return port_; }
  const std::string& path() const { return path_; }

  // The DSN with any password replaced by "***" and control or non-ASCII
  // bytes escaped, for messages.
  const std::string& redacted() const { return redacted_; }
  // redacted() without the query options named `names` (compared decoded),
  // for messages about the store that the rest of the DSN names.
  std::string RedactedWithout(std::initializer_list<absl::string_view> names) const;

  // Returns and marks as used the value of query option `name`.
  std::optional<std::string> TakeOption(absl::string_view name);
  // The value of query option `name`, left for the store's own parser to
  // take (checks that run before the store is built read options this way).
  std::optional<std::string> PeekOption(absl::string_view name) const;
  // Takes every option named `name[INDEX]` (PHP's array syntax, as in
  // Symfony's `memcached:?host[h1:11211]=1&host[h2:11211]=2`): each INDEX
  // and value, in the order given.
  std::vector<std::pair<std::string, std::string>> TakeIndexedOptions(
      absl::string_view name);
  // InvalidArgument naming the first option nobody took: a misspelt option
  // must not be silently ignored.
  absl::Status CheckAllOptionsUsed() const;
  // The name of the first option nobody took, if any (for stores whose
  // messages must not repeat the DSN).
  std::optional<std::string> FirstUnusedOption() const;

  // Helpers over TakeOption() that fail with InvalidArgument naming the
  // option and the DSN.
  absl::StatusOr<bool> TakeBool(absl::string_view name, bool default_value);
  absl::StatusOr<long> TakeInt(absl::string_view name, long default_value,
                               long min, long max);
  // An octal permission mode such as 0600.
  absl::StatusOr<unsigned> TakeMode(absl::string_view name,
                                    unsigned default_value);
  // A number of seconds from 0 to `max`.
  absl::StatusOr<double> TakeSeconds(absl::string_view name, double default_value,
                                     double max = std::numeric_limits<double>::max());
  // The same into an options field that holds the default, for parsers that
  // fill a struct: `*value` is kept when the DSN has no such option, and on
  // an error.
  absl::Status TakeBoolInto(absl::string_view name, bool* value) {
    return Into(TakeBool(name, *value), value);
  }
  absl::Status TakeModeInto(absl::string_view name, mode_t* value) {
    return Into(TakeMode(name, *value), value);
  }
  template <typename Int>
  absl::Status TakeIntInto(absl::string_view name, Int* value, long min, long max) {
    return Into(TakeInt(name, static_cast<long>(*value), min, max), value);
  }
  // An option naming one of `choices` (`{{"path", Naming::kPath}, ...}`).
  // A bad value's message lists the names ("expected symfony or path"), or
  // says `expected` instead when given.
  template <typename T>
  absl::Status TakeChoiceInto(absl::string_view name,
                              std::initializer_list<std::pair<absl::string_view, T>> choices,
                              T* value, absl::string_view expected = {}) {
    std::optional<std::string> v = TakeOption(name);
    if (!v) return absl::OkStatus();
    std::vector<absl::string_view> names;
    for (const auto& [text, choice] : choices) {
      if (*v == text) {
        *value = choice;
        return absl::OkStatus();
      }
      names.push_back(text);
    }
    return expected.empty() ? BadChoice(name, *v, names) : BadOption(name, *v, expected);
  }

 private:
  template <typename T, typename Field>
  static absl::Status Into(const absl::StatusOr<T>& taken, Field* value) {
    if (!taken.ok()) return taken.status();
    *value = static_cast<Field>(*taken);
    return absl::OkStatus();
  }

  struct Option {
    std::string name;
    std::string value;
    bool used = false;
  };
  absl::Status BadOption(absl::string_view name, absl::string_view value,
                         absl::string_view expected) const;
  // BadOption() expecting one of `names`: "a, b or c".
  absl::Status BadChoice(absl::string_view name, absl::string_view value,
                         const std::vector<absl::string_view>& names) const;

  std::string scheme_;
  bool has_authority_ = false;
  std::string user_;
  std::string password_;
  bool has_password_ = false;
  std::string host_;
  int port_ = 0;
  std::string path_;
  std::vector<Option> options_;
  std::string redacted_;
};

// `text` as Dsn::redacted() shows a DSN (passwords and secrets "***"),
// whether or not it parses.
std::string RedactedDsn(absl::string_view text);

// InvalidArgument: `ipclock: bad DSN "<redacted DSN>": <why>`.
absl::Status BadDsn(const Dsn& dsn, absl::string_view why);

// One server of a cluster DSN's list.
struct DsnServer {
  std::string host;  // an IPv6 address without its brackets
  int port = 0;
};

// One server as written in a list ("host", "host:port", "[v6]:port"), cut
// where every server list of ipclock's is cut: at the last ':' outside
// brackets, as Symfony and the client libraries cut them. Stores check what
// they take (a host name, a socket path) and say so in their own words.
struct HostPortText {
  std::string host;  // without the brackets of an IPv6 address
  // The text after the ':' ("" for "host:"); none without a ':'.
  std::optional<std::string> port;
  // A '[' without its ']', or text between the ']' and the ':'.
  bool malformed = false;
};
HostPortText SplitHostPort(absl::string_view server);

// A port number from 1 to 65535, or none.
std::optional<int> PortNumber(absl::string_view text);

// The servers of an authority "host:port[,host:port...]" (ZooKeeper
// ensembles, etcd clusters); a server without a port gets `default_port`.
// An IPv6 address is accepted only alone ("[::1]:2181"). InvalidArgument
// for an empty entry or a port outside 1..65535.
absl::StatusOr<std::vector<DsnServer>> ServerListOf(const Dsn& dsn, int default_port);

// The same servers as "host:port,host:port" (HostPort() each), the form
// client libraries take.
absl::StatusOr<std::string> ServerListText(const Dsn& dsn, int default_port);

// "host:port", an IPv6 address in brackets ("[::1]:2379").
std::string HostPort(absl::string_view host, int port);

// Whether `host` is what client libraries resolve: a host name (labels of
// letters, digits, '-' and '_' between dots, at most 253 bytes) or an IPv4
// or IPv6 address. Anything else (a '/', a '%', a ',') some of them read as
// something else (the ZooKeeper client a chroot, libmemcached a socket) or
// pass to the resolver to fail as if the network were down.
bool IsHostName(absl::string_view host);

}  // namespace ipclock

#endif  // IPCLOCK_CORE_DSN_H_
