// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/dsn.h"

#include <arpa/inet.h>

#include <cmath>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ipclock {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// Decodes %XX escapes. False for a malformed escape and for one that makes a
// NUL or another control byte: every DSN field ends up in a C string (a path,
// a libpq conninfo) where a NUL would silently cut it short, or in a message.
bool PercentDecode(absl::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    int hi = HexValue(in[i + 1]);
    int lo = HexValue(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    const int byte = hi * 16 + lo;
    if (IsControl(static_cast<unsigned char>(byte))) return false;
    out->push_back(static_cast<char>(byte));
    i += 2;
  }
  return true;
}

// `text` fit for a message: control bytes and non-ASCII bytes escaped, so
// that a DSN cannot move the cursor or ring the terminal's bell.
std::string Printable(absl::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (IsControl(c) || c >= 0x80) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

bool ValidScheme(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '+' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

absl::Status Bad(absl::string_view shown, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("ipclock: bad DSN \"", shown, "\": ", why));
}

// The DSN as messages may show it: the userinfo's password, every query
// value named like a credential, and every query value that holds an '@'
// (a nested DSN with its own credentials, as combined stores carry) become
// "***". Works on raw text, so it also covers DSNs that fail to parse.
std::string Redact(absl::string_view text) {
  std::string out(text);
  size_t slashes = out.find("://");
  size_t query = out.find('?');
  if (slashes != std::string::npos && (query == std::string::npos || slashes < query)) {
    size_t auth_begin = slashes + 3;
    size_t auth_end = out.find_first_of("/?#", auth_begin);
    if (auth_end == std::string::npos) auth_end = out.size();
    size_t at = out.rfind('@', auth_end == 0 ? 0 : auth_end - 1);
    if (at != std::string::npos && at >= auth_begin && at < auth_end) {
      size_t colon = out.find(':', auth_begin);
      if (colon != std::string::npos && colon < at) {
        out.replace(colon + 1, at - colon - 1, "***");
      } else if (absl::StartsWith(absl::AsciiStrToLower(out.substr(0, slashes)), "redis")) {
        // Symfony's Redis DSNs put a lone password before the '@'
        // ("redis://secret@host"): the whole userinfo is the password.
        out.replace(auth_begin, at - auth_begin, "***");
      }
    }
    query = out.find('?');
  }
  if (query == std::string::npos) return out;
  static constexpr absl::string_view kCredentialNames[] = {
      "secret", "password", "pass", "passwd", "pwd", "auth", "token"};
  std::string redacted_query;
  for (absl::string_view pair : absl::StrSplit(absl::string_view(out).substr(query + 1), '&')) {
    if (!redacted_query.empty()) redacted_query.push_back('&');
    size_t eq = pair.find('=');
    if (eq == absl::string_view::npos) {
      absl::StrAppend(&redacted_query, pair);
      continue;
    }
    absl::string_view name = pair.substr(0, eq);
    absl::string_view value = pair.substr(eq + 1);
    // Names are compared decoded, as the parser reads them: "pass%77ord"
    // is the option password.
    std::string decoded_name;
    std::string decoded;
    bool sensitive = !PercentDecode(name, &decoded_name) ||
                     !PercentDecode(value, &decoded) ||
                     decoded.find('@') != std::string::npos;
    for (absl::string_view cred : kCredentialNames) {
      if (absl::EqualsIgnoreCase(decoded_name, cred)) sensitive = true;
    }
    absl::StrAppend(&redacted_query, name, "=", sensitive ? "***" : value);
  }
  out.resize(query + 1);
  out += redacted_query;
  return out;
}

}  // namespace

std::string RedactedDsn(absl::string_view text) { return Printable(Redact(text)); }

absl::StatusOr<Dsn> Dsn::Parse(absl::string_view text) {
  Dsn dsn;
  // Redact before anything can fail, so no error repeats a password.
  dsn.redacted_ = Printable(Redact(text));
  const std::string& shown = dsn.redacted_;
  if (text.empty()) return Bad(shown, "empty");
  for (char c : text) {
    if (IsControl(static_cast<unsigned char>(c)) || c == ' ') {
      return Bad(shown, "contains a space or control character");
    }
  }

  absl::string_view rest = text;
  std::string normalized;  // backs `rest` when the text is rewritten below
  size_t colon = rest.find(':');
  size_t question = rest.find('?');
  if (colon == absl::string_view::npos ||
      (question != absl::string_view::npos && question < colon)) {
    // A bare store name, with or without options: "semaphore?mode=0666".
    absl::string_view name = rest.substr(0, question);
    if (!ValidScheme(name)) return Bad(shown, "not a store name");
    dsn.scheme_ = absl::AsciiStrToLower(name);
    if (question == absl::string_view::npos) return dsn;
    // Parse the rest as "scheme:?query".
    normalized = absl::StrCat(name, ":", rest.substr(question));
    rest = normalized;
    colon = name.size();
  }
  absl::string_view scheme = rest.substr(0, colon);
  if (!ValidScheme(scheme)) {
    return Bad(shown, "the scheme must be letters, digits, '+', '-', '.'");
  }
  dsn.scheme_ = absl::AsciiStrToLower(scheme);
  rest.remove_prefix(colon + 1);

  absl::string_view query;
  if (size_t q = rest.find('?'); q != absl::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.find('#') != absl::string_view::npos) {
    return Bad(shown, "fragments ('#') are not allowed");
  }

  if (absl::StartsWith(rest, "//")) {
    dsn.has_authority_ = true;
    rest.remove_prefix(2);
    size_t slash = rest.find('/');
    absl::string_view authority = rest.substr(0, slash);
    rest = slash == absl::string_view::npos ? absl::string_view()
                                            : rest.substr(slash);
    if (size_t at = authority.rfind('@'); at != absl::string_view::npos) {
      absl::string_view userinfo = authority.substr(0, at);
      authority.remove_prefix(at + 1);
      absl::string_view user = userinfo;
      if (size_t c = userinfo.find(':'); c != absl::string_view::npos) {
        user = userinfo.substr(0, c);
        if (!PercentDecode(userinfo.substr(c + 1), &dsn.password_)) {
          return Bad(shown, "bad percent-escape in the password (or one that makes a NUL or control byte)");
        }
        dsn.has_password_ = true;
      }
      if (!PercentDecode(user, &dsn.user_)) {
        return Bad(shown, "bad percent-escape in the user name (or one that makes a NUL or control byte)");
      }
    }
    const HostPortText split = SplitHostPort(authority);
    if (split.malformed) {
      return Bad(shown, authority.find(']') == absl::string_view::npos
                            ? "unclosed '[' in an IPv6 host"
                            : "junk after ']'");
    }
    if (!PercentDecode(split.host, &dsn.host_)) {
      return Bad(shown, "bad percent-escape in the host (or one that makes a NUL or control byte)");
    }
    if (split.port) {
      if (absl::StartsWith(authority, "[") && split.port->find(',') != std::string::npos) {
        return Bad(shown, "a list of servers (host:port,host:port) takes host names and IPv4 "
                          "addresses; an IPv6 address in brackets must be the only server");
      }
      const std::optional<int> port = PortNumber(*split.port);
      if (!port) {
        return Bad(shown, absl::StrCat("the port \"", Printable(*split.port),
                                       "\": expected a number from 1 to 65535"));
      }
      dsn.port_ = *port;
    }
  }
  if (!PercentDecode(rest, &dsn.path_)) {
    return Bad(shown, "bad percent-escape in the path (or one that makes a NUL or control byte)");
  }
  if (!query.empty()) {
    for (absl::string_view pair : absl::StrSplit(query, '&')) {
      if (pair.empty()) continue;
      Option opt;
      absl::string_view name = pair;
      absl::string_view value;
      if (size_t eq = pair.find('='); eq != absl::string_view::npos) {
        name = pair.substr(0, eq);
        value = pair.substr(eq + 1);
      }
      if (!PercentDecode(name, &opt.name)) {
        return Bad(shown, absl::StrCat("option name \"", Printable(name),
                                       "\": a bad percent-escape, or one that makes a NUL or "
                                       "control byte"));
      }
      if (!PercentDecode(value, &opt.value)) {
        return Bad(shown, absl::StrCat("option ", Printable(opt.name),
                                       ": a bad percent-escape in its value, or one that makes "
                                       "a NUL or control byte"));
      }
      if (opt.name.empty()) return Bad(shown, "an option has no name");
      for (const Option& seen : dsn.options_) {
        if (seen.name == opt.name) {
          return Bad(shown, absl::StrCat("option '", opt.name, "' is given twice"));
        }
      }
      dsn.options_.push_back(std::move(opt));
    }
  }
  return dsn;
}

std::string Dsn::RedactedWithout(std::initializer_list<absl::string_view> names) const {
  const size_t q = redacted_.find('?');
  if (q == std::string::npos) return redacted_;
  std::vector<absl::string_view> kept;
  for (absl::string_view pair : absl::StrSplit(absl::string_view(redacted_).substr(q + 1), '&')) {
    std::string name;
    if (!PercentDecode(pair.substr(0, pair.find('=')), &name)) name.clear();
    bool drop = false;
    for (absl::string_view n : names) drop = drop || name == n;
    if (!drop && !pair.empty()) kept.push_back(pair);
  }
  if (kept.empty()) return redacted_.substr(0, q);
  return absl::StrCat(redacted_.substr(0, q), "?", absl::StrJoin(kept, "&"));
}

std::optional<std::string> Dsn::TakeOption(absl::string_view name) {
  for (Option& o : options_) {
    if (o.name == name) {
      o.used = true;
      return o.value;
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> Dsn::TakeIndexedOptions(
    absl::string_view name) {
  std::vector<std::pair<std::string, std::string>> out;
  for (Option& o : options_) {
    absl::string_view n = o.name;
    if (n.size() > name.size() + 1 && absl::StartsWith(n, name) &&
        n[name.size()] == '[' && n.back() == ']') {
      o.used = true;
      out.emplace_back(std::string(n.substr(name.size() + 1, n.size() - name.size() - 2)),
                       o.value);
    }
  }
  return out;
}

std::optional<std::string> Dsn::PeekOption(absl::string_view name) const {
  for (const Option& o : options_) {
    if (o.name == name) return o.value;
  }
  return std::nullopt;
}

std::optional<std::string> Dsn::FirstUnusedOption() const {
  for (const Option& o : options_) {
    if (!o.used) return o.name;
  }
  return std::nullopt;
}

absl::Status Dsn::CheckAllOptionsUsed() const {
  for (const Option& o : options_) {
    if (!o.used) {
      return Bad(redacted_, absl::StrCat("unknown option '", o.name,
                                         "' for the ", scheme_, " store"));
    }
  }
  return absl::OkStatus();
}

bool IsHostName(absl::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  if (host.find(':') != absl::string_view::npos) {
    unsigned char addr[16];
    return inet_pton(AF_INET6, std::string(host).c_str(), addr) == 1;
  }
  for (absl::string_view label : absl::StrSplit(host, '.')) {
    if (label.empty() || label.size() > 63) return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(c) && c != '-' && c != '_') return false;
    }
  }
  return true;
}

absl::Status BadDsn(const Dsn& dsn, absl::string_view why) {
  return Bad(dsn.redacted(), why);
}

absl::Status Dsn::BadOption(absl::string_view name, absl::string_view value,
                            absl::string_view expected) const {
  return Bad(redacted_, absl::StrCat("option ", name, "=", value, ": expected ",
                                     expected));
}

absl::Status Dsn::BadChoice(absl::string_view name, absl::string_view value,
                            const std::vector<absl::string_view>& names) const {
  std::string expected;
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StrAppend(&expected, i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", names[i]);
  }
  return BadOption(name, value, expected);
}

absl::StatusOr<bool> Dsn::TakeBool(absl::string_view name, bool default_value) {
  std::optional<std::string> v = TakeOption(name);
  if (!v) return default_value;
  std::string s = absl::AsciiStrToLower(*v);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  return BadOption(name, *v, "true or false");
}

absl::StatusOr<long> Dsn::TakeInt(absl::string_view name, long default_value,
                                  long min, long max) {
  std::optional<std::string> v = TakeOption(name);
  if (!v) return default_value;
  long n;
  if (!absl::SimpleAtoi(*v, &n) || n < min || n > max) {
    return BadOption(name, *v,
                     absl::StrCat("a whole number from ", min, " to ", max));
  }
  return n;
}

absl::StatusOr<unsigned> Dsn::TakeMode(absl::string_view name,
                                       unsigned default_value) {
  std::optional<std::string> v = TakeOption(name);
  if (!v) return default_value;
  if (v->empty() || v->size() > 4) {
    return BadOption(name, *v, "an octal mode such as 0600");
  }
  unsigned mode = 0;
  for (char c : *v) {
    if (c < '0' || c > '7') return BadOption(name, *v, "an octal mode such as 0600");
    mode = mode * 8 + static_cast<unsigned>(c - '0');
  }
  if (mode > 0777) return BadOption(name, *v, "a mode no higher than 0777");
  return mode;
}

absl::StatusOr<double> Dsn::TakeSeconds(absl::string_view name, double default_value,
                                        double max) {
  std::optional<std::string> v = TakeOption(name);
  if (!v) return default_value;
  double d;
  if (!absl::SimpleAtod(*v, &d) || !std::isfinite(d) || d < 0 || d > max) {
    return BadOption(name, *v,
                     max == std::numeric_limits<double>::max()
                         ? std::string("a number of seconds (0 or more)")
                         : absl::StrCat("a number of seconds from 0 to ", max));
  }
  return d;
}

HostPortText SplitHostPort(absl::string_view server) {
  HostPortText out;
  absl::string_view rest;
  if (absl::ConsumePrefix(&server, "[")) {
    const size_t close = server.find(']');
    if (close == absl::string_view::npos) {
      out.malformed = true;
      return out;
    }
    out.host = std::string(server.substr(0, close));
    rest = server.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') out.malformed = true;
  } else {
    const size_t colon = server.rfind(':');
    out.host = std::string(server.substr(0, colon));
    if (colon != absl::string_view::npos) rest = server.substr(colon);
  }
  if (absl::ConsumePrefix(&rest, ":")) out.port = std::string(rest);
  return out;
}

std::optional<int> PortNumber(absl::string_view text) {
  // Digits only: SimpleAtoi would also take a sign and spaces around them.
  if (text.empty() || text.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return std::nullopt;
  return port;
}

absl::StatusOr<std::vector<DsnServer>> ServerListOf(const Dsn& dsn, int default_port) {
  // The parser splits the authority at its last ':': a list "h1:p1,h2:p2"
  // arrives as host "h1:p1,h2" and port p2.
  std::string hosts = dsn.host();
  if (dsn.port() != 0) absl::StrAppend(&hosts, ":", dsn.port());
  std::vector<DsnServer> servers;
  if (hosts.find(',') == std::string::npos && dsn.host().find(':') != std::string::npos) {
    servers.push_back({dsn.host(), dsn.port() != 0 ? dsn.port() : default_port});  // IPv6
    return servers;
  }
  for (absl::string_view part : absl::StrSplit(hosts, ',')) {
    if (part.empty()) return BadDsn(dsn, "an empty server in the list");
    if (part.find('[') != absl::string_view::npos) {
      return BadDsn(dsn, "IPv6 addresses are accepted only as a single server");
    }
    HostPortText server = SplitHostPort(part);
    const std::optional<int> port =
        server.port ? PortNumber(*server.port) : std::optional<int>(default_port);
    if (server.host.empty() || !port) {
      return BadDsn(dsn, absl::StrCat("server \"", part, "\": expected host:port with a "
                                      "port from 1 to 65535"));
    }
    servers.push_back({std::move(server.host), *port});
  }
  return servers;
}

absl::StatusOr<std::string> ServerListText(const Dsn& dsn, int default_port) {
  absl::StatusOr<std::vector<DsnServer>> servers = ServerListOf(dsn, default_port);
  if (!servers.ok()) return servers.status();
  std::vector<std::string> parts;
  for (const DsnServer& s : *servers) parts.push_back(HostPort(s.host, s.port));
  return absl::StrJoin(parts, ",");
}

std::string HostPort(absl::string_view host, int port) {
  return host.find(':') != absl::string_view::npos ? absl::StrCat("[", host, "]:", port)
                                                   : absl::StrCat(host, ":", port);
}

}  // namespace ipclock
