// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/etcd/etcd_names.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace ipclock {

std::string EncodeEtcdResource(absl::string_view resource) {
  // One pass: a "%25" written is not read again.
  return absl::StrReplaceAll(resource, {{"%", "%25"}, {"/", "%2F"}});
}

std::optional<std::string> DecodeEtcdResource(absl::string_view encoded) {
  std::string out;
  for (size_t i = 0; i < encoded.size(); ++i) {
    const char c = encoded[i];
    if (c == '/') return std::nullopt;
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    const absl::string_view esc = encoded.substr(i, 3);
    if (esc == "%25") {
      out.push_back('%');
    } else if (esc == "%2F") {
      out.push_back('/');
    } else {
      return std::nullopt;
    }
    i += 2;
  }
  return out;
}

std::string EtcdPrefixEnd(absl::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    const unsigned char last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // etcd's "every key from the start on"
}

std::string LeaseHex(int64_t lease) {
  return absl::StrCat(absl::Hex(static_cast<uint64_t>(lease)));
}

bool EtcdLockKeys::IsReader(absl::string_view key) const {
  return absl::StartsWith(key, readers);
}

EtcdLockKeys KeysOf(absl::string_view prefix, absl::string_view resource) {
  EtcdLockKeys k;
  k.record = prefix.empty() ? EncodeEtcdResource(resource)
                            : absl::StrCat(prefix, "/", EncodeEtcdResource(resource));
  k.queue = absl::StrCat(k.record, "/");
  k.queue_end = EtcdPrefixEnd(k.queue);
  k.readers = absl::StrCat(k.queue, kEtcdReaderDir);
  k.readers_end = EtcdPrefixEnd(k.readers);
  return k;
}

std::optional<EtcdKeyName> ParseEtcdKey(absl::string_view prefix, absl::string_view key) {
  if (!prefix.empty()) {
    if (!absl::ConsumePrefix(&key, prefix) || !absl::ConsumePrefix(&key, "/")) {
      return std::nullopt;
    }
  }
  EtcdKeyName out;
  const size_t slash = key.find('/');
  out.encoded = std::string(key.substr(0, slash));
  if (out.encoded.empty()) return std::nullopt;
  out.resource = DecodeEtcdResource(out.encoded).value_or("");
  if (slash == absl::string_view::npos) {
    out.record = true;
    return out;
  }
  out.lock_name = std::string(key.substr(slash + 1));
  out.reader = absl::StartsWith(out.lock_name, kEtcdReaderDir);
  return out;
}

}  // namespace ipclock
