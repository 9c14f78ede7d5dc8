// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/key_naming.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/diagnostics.h"
#include "core/hashing.h"
#include "core/named_file.h"
#include "platform/errors.h"
#include "platform/small_file.h"

namespace ipclock {

absl::Status ValidateSecret(absl::string_view secret, absl::string_view store) {
  if (secret.size() < kMinSecretBytes) {
    // Neither the secret nor its length: a message may end up in a log.
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat("the key-naming secret is too short: it "
                                   "must be at least ",
                                   kMinSecretBytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<KeyNaming> KeyNaming::Create(KeyNamingOptions options,
                                            absl::string_view store) {
  if (!options.secret.empty()) {
    if (absl::Status s = ValidateSecret(options.secret, store); !s.ok()) {
      return s;
    }
  }
  if (options.scheme == KeyNamingOptions::Scheme::kParseLock &&
      !options.prefix.empty()) {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat("naming=parse-lock fixes the prefix (\"",
                                   kParseLockPrefix,
                                   "\"); remove the prefix option"));
  }
  return KeyNaming(std::move(options), std::string(store));
}

absl::StatusOr<std::string> KeyNaming::Name(absl::string_view resource) const {
  if (resource.empty()) {
    return StoreError(absl::StatusCode::kInvalidArgument, store_, "",
                      "resource name is empty");
  }
  if (options_.scheme == KeyNamingOptions::Scheme::kParseLock) {
    if (resource.size() > kParseLockMaxResourceBytes) {
      return StoreError(
          absl::StatusCode::kInvalidArgument, store_, resource,
          absl::StrCat("naming=parse-lock takes resource names of at most ",
                       kParseLockMaxResourceBytes, " bytes (Parse::Lock's "
                       "limit); this one is ", resource.size()));
    }
    return absl::StrCat(kParseLockPrefix,
                        has_secret() ? ToHex(HmacSha256(options_.secret, resource))
                                     : ToHex(Sha256(resource)));
  }
  if (has_secret()) {
    return absl::StrCat(options_.prefix,
                        ToHex(HmacSha256(options_.secret, resource)));
  }
  return absl::StrCat(options_.prefix, resource);
}

std::string KeyNaming::Describe() const {
  if (options_.scheme == KeyNamingOptions::Scheme::kParseLock) {
    return has_secret() ? "parse-lock (HMAC-SHA256)"
                        : "parse-lock (SHA-256, no secret)";
  }
  std::string prefix =
      options_.prefix.empty() ? "" : absl::StrCat("prefix ", QuoteResource(options_.prefix), " + ");
  return absl::StrCat(prefix, has_secret() ? "HMAC-SHA256" : "plain resource");
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path,
                                           absl::string_view store) {
  const std::string what = absl::StrCat("secret_file ", path);
  // A FIFO, a device, a dir or a /proc file is refused before it is opened,
  // and a missing file is a configuration fault like them.
  if (absl::Status s = CheckNamedFile(store, absl::StrCat("option secret_file=", path), path,
                                      FileKind::kRegularFile, IfMissing::kConfiguration);
      !s.ok()) {
    return s;
  }
  // One byte over the limit tells "too long" from "exactly the limit".
  absl::StatusOr<std::string> read =
      ReadRegularFile(path, kMaxSecretFileBytes, store);
  if (absl::IsResourceExhausted(read.status())) {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat(what, " is longer than ", kMaxSecretFileBytes,
                                   " bytes: is it really a secret?"));
  }
  if (!read.ok()) {
    // A dir or a FIFO where a secret should be is a bad option value.
    const absl::StatusCode code = absl::IsFailedPrecondition(read.status())
                                      ? absl::StatusCode::kInvalidArgument
                                      : read.status().code();
    return absl::Status(code,
                        absl::StrCat(read.status().message(), " (", what, ")"));
  }
  std::string secret = *std::move(read);
  if (absl::EndsWith(secret, "\r\n")) {
    secret.resize(secret.size() - 2);
  } else if (absl::EndsWith(secret, "\n")) {
    secret.pop_back();
  }
  if (secret.empty()) {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat(what, " is empty"));
  }
  if (secret.size() < kMinSecretBytes) {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat("the secret in ", what,
                                   " is too short: it must be at least ",
                                   kMinSecretBytes, " bytes"));
  }
  return secret;
}

absl::StatusOr<KeyNamingOptions> KeyNamingOptionsFromDsn(
    Dsn& dsn, absl::string_view store) {
  KeyNamingOptions options;
  using Scheme = KeyNamingOptions::Scheme;
  absl::Status naming = dsn.TakeChoiceInto(
      "naming", {{"plain", Scheme::kPlain}, {"parse-lock", Scheme::kParseLock}}, &options.scheme);
  if (!naming.ok()) return naming;
  if (std::optional<std::string> prefix = dsn.TakeOption("prefix")) {
    options.prefix = *std::move(prefix);
  }
  std::optional<std::string> secret = dsn.TakeOption("secret");
  std::optional<std::string> secret_file = dsn.TakeOption("secret_file");
  if (secret && secret_file) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: bad DSN \"", dsn.redacted(),
        "\": give either secret or secret_file, not both"));
  }
  if (secret) {
    if (*secret == "none") {
      options.secret_none = true;
    } else {
      if (absl::Status s = ValidateSecret(*secret, store); !s.ok()) return s;
      options.secret = *std::move(secret);
    }
  } else if (secret_file) {
    if (secret_file->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ipclock: bad DSN \"", dsn.redacted(), "\": secret_file is empty"));
    }
    absl::StatusOr<std::string> read = ReadSecretFile(*secret_file, store);
    if (!read.ok()) return read.status();
    options.secret = *std::move(read);
  }
  return options;
}

absl::StatusOr<KeyNamingOptions> PlainKeyNamingOptionsFromDsn(Dsn& dsn, absl::string_view store,
                                                              absl::string_view names) {
  absl::StatusOr<KeyNamingOptions> naming = KeyNamingOptionsFromDsn(dsn, store);
  if (naming.ok() && naming->scheme != KeyNamingOptions::Scheme::kPlain) {
    return BadDsn(dsn, absl::StrCat("naming=parse-lock is Parse::Lock's Redis naming; ", names,
                                    " are named plain (prefix=, secret=)"));
  }
  return naming;
}

void WarnIfNoSecret(const KeyNaming& naming, absl::string_view store) {
  if (naming.has_secret() || naming.secret_none()) return;
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  std::string text = absl::StrCat(
      "ipclock: warning: ", store,
      " names its keys without a secret (", naming.Describe(),
      "): other clients of the server can list them and hold them to starve "
      "this program. Add secret_file=PATH (16 bytes or more; HMAC-SHA256 "
      "names), or secret=none to say the plain names are meant (e.g. to "
      "share locks with Symfony). This warning is shown once per process.");
  EmitNotice(DiagnosticSeverity::kWarning, text);
}

}  // namespace ipclock
