// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// TLS client streams (mbedTLS, TLS 1.2) over net_stream.h's TCP, for
// ipclock's own protocol clients (`etcds://`). Built only where mbedTLS's
// TLS and X.509 libraries are (the etcd store's TLS; ipclock_config.h's
// IPCLOCK_HAVE_ETCD_TLS).
//
// What is checked: the server's certificate chain against the CA given
// (or the system's bundle), and its name: a DNS name through mbedTLS (the
// subject alternative names, else the CN); an IP address, which mbedTLS
// 2.28 does not compare, here against the certificate's iPAddress names.
// `verify = false` checks nothing (for tests against throwaway servers
// only; the DSN option says "insecure" in its name).

#ifndef IPCLOCK_PLATFORM_TLS_STREAM_H_
#define IPCLOCK_PLATFORM_TLS_STREAM_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "platform/net_stream.h"

namespace ipclock {

struct TlsClientOptions {
  // PEM file of the CA certificates to trust; empty for the system's
  // (/etc/ssl/certs/ca-certificates.crt).
  std::string ca_file;
  // The client's certificate (PEM) and its private key (PEM, unencrypted),
  // for servers that ask for one (etcd's --client-cert-auth). Both or none.
  std::string cert_file;
  std::string key_file;
  bool verify = true;
};

// The parsed certificates and key, shared by every stream of a store.
class TlsClientConfig;

// Reads the files. InvalidArgument naming the file for one that does not
// parse, NotFound / PermissionDenied for one that cannot be read.
absl::StatusOr<std::shared_ptr<const TlsClientConfig>> LoadTlsClientConfig(
    const TlsClientOptions& options);

// Connects and completes the handshake by `deadline`; `host` is also the
// name the certificate must carry (SNI too, for a DNS name). Unavailable
// for a connection that failed; PermissionDenied, naming what mbedTLS
// found, for a certificate refused on either side (a TLS refusal is
// configuration, not a passing fault).
absl::StatusOr<std::unique_ptr<ByteStream>> ConnectTls(
    const std::string& host, int port, std::shared_ptr<const TlsClientConfig> config,
    MonotonicDeadline deadline);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_TLS_STREAM_H_
