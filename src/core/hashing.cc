// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/hashing.h"

#include <mbedtls/md.h>
#include <mbedtls/md5.h>
#include <mbedtls/sha1.h>
#include <mbedtls/sha256.h>
#include <mbedtls/version.h>

namespace ipclock {

// mbedTLS 2.x names the one-shot digests *_ret; 3.x dropped the suffix.
#if MBEDTLS_VERSION_MAJOR < 3
#define IPCLOCK_SHA256 mbedtls_sha256_ret
#define IPCLOCK_MD5 mbedtls_md5_ret
#define IPCLOCK_SHA1 mbedtls_sha1_ret
#else
#define IPCLOCK_SHA256 mbedtls_sha256
#define IPCLOCK_MD5 mbedtls_md5
#define IPCLOCK_SHA1 mbedtls_sha1
#endif

Sha256Digest Sha256(absl::string_view data) {
  Sha256Digest out;
  IPCLOCK_SHA256(reinterpret_cast<const unsigned char*>(data.data()),
                 data.size(), out.data(), /*is224=*/0);
  return out;
}

Md5Digest Md5(absl::string_view data) {
  Md5Digest out;
  IPCLOCK_MD5(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
              out.data());
  return out;
}

Sha1Digest Sha1(absl::string_view data) {
  Sha1Digest out;
  IPCLOCK_SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
               out.data());
  return out;
}

Sha256Digest HmacSha256(absl::string_view secret, absl::string_view data) {
  Sha256Digest out;
  mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256),
                  reinterpret_cast<const unsigned char*>(secret.data()),
                  secret.size(),
                  reinterpret_cast<const unsigned char*>(data.data()),
                  data.size(), out.data());
  return out;
}

}  // namespace ipclock
