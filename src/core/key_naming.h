// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Names of locks on shared servers (Redis, PostgreSQL).
//
// A remote store puts its locks where other tenants of the same server can
// see them: anyone who can run KEYS/SCAN on a shared Redis, or query
// pg_locks, learns which resources we lock, and anyone who can guess a name
// can take ("pin") it and starve us. `KeyNaming` maps a resource to the
// server-side name:
//
//   plain, no secret     prefix + resource                (interoperable)
//   plain, secret        prefix + hex(HMAC-SHA256(secret, resource))
//   parse-lock, secret   "parse-stack:lock:v1:" + hex(HMAC-SHA256(secret, resource))
//   parse-lock, none     "parse-stack:lock:v1:" + hex(SHA-256(resource))
//
// hex is lowercase, 64 digits. With a secret the names say nothing about the
// resources, and nobody without the secret can compute the name of a
// resource to hold it. The `parse-lock` preset is the naming of the
// Parse::Lock Ruby gem (spec/interop.md): keys it makes and keys we make
// for the same resource and secret are the same key.
//
// Secrets are at least `kMinSecretBytes` (16) bytes, as Parse::Lock asks;
// shorter ones are InvalidArgument. No message ever contains a secret (nor
// its length). Prefer `secret_file=PATH` to `secret=...` in DSNs: a DSN is
// configuration that ends up in process listings and logs.
//
// When a remote store runs without a secret, `WarnIfNoSecret()` writes one
// warning to stderr, once per process, unless the DSN says `secret=none`
// (the explicit "I know; the names are meant to be plain", e.g. to
// interoperate with Symfony, whose Redis keys are the plain resource).
//
// Used by the Redis store and the PostgreSQL store (which hashes the name
// it gets into an advisory-lock id).

#ifndef IPCLOCK_CORE_KEY_NAMING_H_
#define IPCLOCK_CORE_KEY_NAMING_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"

namespace ipclock {

inline constexpr size_t kMinSecretBytes = 16;
inline constexpr absl::string_view kParseLockPrefix = "parse-stack:lock:v1:";
// Parse::Lock refuses longer resource names; so does the parse-lock preset,
// whatever KeyOptions::max_resource_bytes says.
inline constexpr size_t kParseLockMaxResourceBytes = 1024;
// The longest secret file read (a secret is a key, not a document).
inline constexpr size_t kMaxSecretFileBytes = 4096;

struct KeyNamingOptions {
  enum class Scheme {
    kPlain,      // prefix + resource, or prefix + HMAC hex with a secret
    kParseLock,  // Parse::Lock: fixed prefix + HMAC hex, or SHA-256 hex
  };
  Scheme scheme = Scheme::kPlain;
  // Prepended to every name. Must be empty for kParseLock (its prefix is
  // fixed).
  std::string prefix;
  // HMAC-SHA256 key; empty for none. At least kMinSecretBytes bytes.
  std::string secret;
  // The user said `secret=none`: no secret, and no warning about it.
  bool secret_none = false;
};

class KeyNaming {
 public:
  // InvalidArgument for a short secret, or a prefix with kParseLock.
  // `store` names the store in messages.
  static absl::StatusOr<KeyNaming> Create(KeyNamingOptions options,
                                          absl::string_view store);

  // The server-side name of `resource`. InvalidArgument for an empty name,
  // or one over kParseLockMaxResourceBytes with the parse-lock preset.
  absl::StatusOr<std::string> Name(absl::string_view resource) const;

  bool has_secret() const { return !options_.secret.empty(); }
  // The name is a digest (the resource cannot be read back from it).
  bool hashed() const {
    return has_secret() || options_.scheme == KeyNamingOptions::Scheme::kParseLock;
  }
  const std::string& prefix() const { return options_.prefix; }
  KeyNamingOptions::Scheme scheme() const { return options_.scheme; }
  // The user silenced the no-secret warning with `secret=none`.
  bool secret_none() const { return options_.secret_none; }

  // For messages, never the secret: e.g. `plain`, `prefix "app:" +
  // HMAC-SHA256`, `parse-lock (SHA-256, no secret)`.
  std::string Describe() const;

 private:
  KeyNaming(KeyNamingOptions options, std::string store)
      : options_(std::move(options)), store_(std::move(store)) {}

  KeyNamingOptions options_;
  std::string store_;
};

// InvalidArgument unless `secret` is at least kMinSecretBytes long. The
// message names `store` and never the secret.
absl::Status ValidateSecret(absl::string_view secret, absl::string_view store);

// Reads a secret from `path`: the whole file, minus one trailing "\n" or
// "\r\n" (what `echo` and editors add). NotFound / PermissionDenied naming
// the path for an unreadable file, InvalidArgument for an empty, short or
// over-long (kMaxSecretFileBytes) one.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path,
                                           absl::string_view store);

// Takes the naming options of a remote store's DSN:
//   prefix=STR          prepended to every name
//   secret=STR          the HMAC secret itself (prefer secret_file), or
//                       `none`: no secret, and no warning about it
//   secret_file=PATH    read the secret from PATH
//   naming=plain|parse-lock
// `secret` and `secret_file` exclude each other.
absl::StatusOr<KeyNamingOptions> KeyNamingOptionsFromDsn(Dsn& dsn,
                                                         absl::string_view store);

// The same for a store whose names are plain only: naming=parse-lock
// (Parse::Lock's Redis naming) is a bad DSN, which says that `names` (e.g.
// "memcached keys") are named plain.
absl::StatusOr<KeyNamingOptions> PlainKeyNamingOptionsFromDsn(Dsn& dsn, absl::string_view store,
                                                              absl::string_view names);

// Copies `naming` into the options of a store that names plain
// (`name_prefix`, `secret`, `warn_without_secret`).
template <typename StoreOptions>
void SetPlainKeyNaming(const KeyNamingOptions& naming, StoreOptions* options) {
  options->name_prefix = naming.prefix;
  options->secret = naming.secret;
  options->warn_without_secret = !naming.secret_none;
}

// Once per process, writes to stderr that `store` names its keys without a
// secret (so other clients of the server can see and pin them), unless
// `naming` has a secret or the user said `secret=none`.
void WarnIfNoSecret(const KeyNaming& naming, absl::string_view store);

}  // namespace ipclock

#endif  // IPCLOCK_CORE_KEY_NAMING_H_
