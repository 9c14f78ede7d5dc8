// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// mbedTLS 2.28 under a non-blocking socket: every handshake step, read and
// write that wants the socket waits for it with poll(2) up to the caller's
// deadline. Caveats handled here:
//   * mbedTLS's random generator and the parsed certificates are shared by
//     every stream of a store; the generator is thread-safe only because
//     Debian builds mbedTLS with MBEDTLS_THREADING_PTHREAD (checked below).
//   * mbedTLS 2.28 compares a host name with the certificate's DNS names
//     and CN but not with its iPAddress names, which is what servers
//     reached by address carry: for an address the name check is done
//     here, after the handshake verified the chain.
//   * A child of fork() must not say goodbye (close_notify) on its
//     parent's connection: it frees its copy quietly.
//   * A full handshake costs an ECDHE exchange and a chain to verify, and a
//     store opens a connection per wait: each server's last session (its
//     ticket) is kept, and the next connection to it resumes that session
//     (the server checks it; one it no longer takes means a full
//     handshake).

#include "platform/tls_stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <mbedtls/config.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

#if !defined(MBEDTLS_THREADING_C) || !defined(MBEDTLS_THREADING_PTHREAD)
#error "mbedTLS without MBEDTLS_THREADING_PTHREAD: its shared random generator would race"
#endif

namespace ipclock {

namespace {

constexpr const char* kSystemBundle = "/etc/ssl/certs/ca-certificates.crt";
// X.509's context-specific tag [7] of an iPAddress general name.
constexpr int kIpAddressTag = MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7;

std::string MbedText(int rc) {
  char buf[160];
  mbedtls_strerror(rc, buf, sizeof(buf));
  return absl::StrCat(buf, " (-0x", absl::Hex(-rc), ")");
}

// A file that mbedTLS could not load: unreadable, or not PEM/DER of the
// kind expected.
absl::Status FileError(absl::string_view what, const std::string& path, int rc) {
  if (rc == MBEDTLS_ERR_PK_FILE_IO_ERROR || rc == MBEDTLS_ERR_X509_FILE_IO_ERROR) {
    const int err = errno;
    const absl::StatusCode code = err == EACCES || err == EPERM
                                      ? absl::StatusCode::kPermissionDenied
                                      : absl::StatusCode::kNotFound;
    return absl::Status(code, absl::StrCat("cannot read the ", what, " ", path));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the ", what, " ", path, " does not parse: ", MbedText(rc)));
}

}  // namespace

class TlsClientConfig {
 public:
  TlsClientConfig() {
    mbedtls_ssl_config_init(&conf_);
    mbedtls_x509_crt_init(&ca_);
    mbedtls_x509_crt_init(&own_);
    mbedtls_pk_init(&key_);
    mbedtls_entropy_init(&entropy_);
    mbedtls_ctr_drbg_init(&drbg_);
  }
  ~TlsClientConfig() {
    mbedtls_ssl_config_free(&conf_);
    mbedtls_x509_crt_free(&ca_);
    mbedtls_x509_crt_free(&own_);
    mbedtls_pk_free(&key_);
    mbedtls_ctr_drbg_free(&drbg_);
    mbedtls_entropy_free(&entropy_);
  }
  TlsClientConfig(const TlsClientConfig&) = delete;
  TlsClientConfig& operator=(const TlsClientConfig&) = delete;

  absl::Status Load(const TlsClientOptions& options) {
    verify_ = options.verify;
    static const char kPersonal[] = "ipclock-tls";
    int rc = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_,
                                   reinterpret_cast<const unsigned char*>(kPersonal),
                                   sizeof(kPersonal) - 1);
    if (rc != 0) return absl::InternalError(absl::StrCat("TLS random seed: ", MbedText(rc)));
    rc = mbedtls_ssl_config_defaults(&conf_, MBEDTLS_SSL_IS_CLIENT,
                                     MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    if (rc != 0) return absl::InternalError(absl::StrCat("TLS defaults: ", MbedText(rc)));
    mbedtls_ssl_conf_rng(&conf_, mbedtls_ctr_drbg_random, &drbg_);
    mbedtls_ssl_conf_min_version(&conf_, MBEDTLS_SSL_MAJOR_VERSION_3,
                                 MBEDTLS_SSL_MINOR_VERSION_3);  // TLS 1.2
    if (verify_) {
      const std::string ca = options.ca_file.empty() ? kSystemBundle : options.ca_file;
      rc = mbedtls_x509_crt_parse_file(&ca_, ca.c_str());
      // > 0: some certificates of a bundle did not parse; the rest serve.
      if (rc < 0) return FileError("CA file", ca, rc);
      mbedtls_ssl_conf_ca_chain(&conf_, &ca_, nullptr);
      mbedtls_ssl_conf_authmode(&conf_, MBEDTLS_SSL_VERIFY_REQUIRED);
    } else {
      mbedtls_ssl_conf_authmode(&conf_, MBEDTLS_SSL_VERIFY_NONE);
    }
    if (options.cert_file.empty() != options.key_file.empty()) {
      return absl::InvalidArgumentError(
          "a client certificate needs its key, and a key its certificate");
    }
    if (!options.cert_file.empty()) {
      rc = mbedtls_x509_crt_parse_file(&own_, options.cert_file.c_str());
      if (rc != 0) return FileError("client certificate", options.cert_file, rc < 0 ? rc : -1);
      rc = mbedtls_pk_parse_keyfile(&key_, options.key_file.c_str(), nullptr);
      if (rc != 0) return FileError("client key", options.key_file, rc);
      rc = mbedtls_ssl_conf_own_cert(&conf_, &own_, &key_);
      if (rc != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the client certificate and key do not go together: ", MbedText(rc)));
      }
    }
    return absl::OkStatus();
  }

  const mbedtls_ssl_config* conf() const { return &conf_; }
  bool verify() const { return verify_; }

  // Offers the last session with `server` ("host:port") for resumption.
  void OfferSession(const std::string& server, mbedtls_ssl_context* ssl) const {
    std::lock_guard<std::mutex> guard(mu_);
    auto it = sessions_.find(server);
    if (it != sessions_.end()) mbedtls_ssl_set_session(ssl, it->second.get());
  }
  // Keeps the session of a handshake just completed with `server`.
  void KeepSession(const std::string& server, const mbedtls_ssl_context* ssl) const {
    std::unique_ptr<mbedtls_ssl_session, SessionFree> session(new mbedtls_ssl_session);
    mbedtls_ssl_session_init(session.get());
    if (mbedtls_ssl_get_session(ssl, session.get()) != 0) return;
    std::lock_guard<std::mutex> guard(mu_);
    sessions_[server] = std::move(session);
  }

 private:
  struct SessionFree {
    void operator()(mbedtls_ssl_session* s) const {
      mbedtls_ssl_session_free(s);
      delete s;
    }
  };

  mbedtls_ssl_config conf_;
  mbedtls_x509_crt ca_;
  mbedtls_x509_crt own_;
  mbedtls_pk_context key_;
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  bool verify_ = true;
  mutable std::mutex mu_;
  // The last session with each server, by "host:port"; guarded by mu_.
  mutable std::map<std::string, std::unique_ptr<mbedtls_ssl_session, SessionFree>> sessions_;
};

namespace {

class TlsStream final : public ByteStream {
 public:
  TlsStream(int fd, std::shared_ptr<const TlsClientConfig> config)
      : ByteStream(fd), config_(std::move(config)) {
    mbedtls_ssl_init(&ssl_);
  }
  ~TlsStream() override {
    // The parent's connection is left alone by a forked child.
    if (handshaken_ && ours() && fd_ >= 0) mbedtls_ssl_close_notify(&ssl_);
    mbedtls_ssl_free(&ssl_);
    CloseSocket();
  }

  absl::Status Handshake(const std::string& host, int port, MonotonicDeadline deadline) {
    int rc = mbedtls_ssl_setup(&ssl_, config_->conf());
    if (rc != 0) return absl::InternalError(absl::StrCat("TLS setup: ", MbedText(rc)));
    unsigned char addr[16];
    ip_len_ = inet_pton(AF_INET, host.c_str(), addr) == 1    ? 4
              : inet_pton(AF_INET6, host.c_str(), addr) == 1 ? 16
                                                              : 0;
    memcpy(ip_, addr, ip_len_);
    // A DNS name goes to SNI and to mbedTLS's name check; an address is
    // checked below.
    rc = mbedtls_ssl_set_hostname(&ssl_, ip_len_ == 0 ? host.c_str() : nullptr);
    if (rc != 0) return absl::InternalError(absl::StrCat("TLS host name: ", MbedText(rc)));
    mbedtls_ssl_set_bio(&ssl_, this, &TlsStream::Send, &TlsStream::Recv, nullptr);
    const std::string server = absl::StrCat(host, ":", port);
    config_->OfferSession(server, &ssl_);
    for (;;) {
      rc = mbedtls_ssl_handshake(&ssl_);
      if (rc == 0) break;
      if (!Await(rc, deadline)) {
        return absl::UnavailableError(absl::StrCat("TLS handshake with ", host,
                                                   ": no answer in time"));
      }
      if (rc != MBEDTLS_ERR_SSL_WANT_READ && rc != MBEDTLS_ERR_SSL_WANT_WRITE) {
        return HandshakeFailure(host, port, rc, deadline);
      }
    }
    handshaken_ = true;
    if (config_->verify() && ip_len_ > 0 && !PeerHasAddress()) {
      // A server certificate that fails is configuration (ipclock/errors.h):
      // the CA or the address, not credentials, must change.
      return absl::InvalidArgumentError(absl::StrCat(
          "TLS: the server's certificate does not name the address ", host,
          " (no such iPAddress subject alternative name)"));
    }
    config_->KeepSession(server, &ssl_);
    return absl::OkStatus();
  }

  absl::Status Write(absl::string_view data, MonotonicDeadline deadline) override {
    while (!data.empty()) {
      const int rc = mbedtls_ssl_write(&ssl_, reinterpret_cast<const unsigned char*>(data.data()),
                                       data.size());
      if (rc > 0) {
        data.remove_prefix(static_cast<size_t>(rc));
        continue;
      }
      if (!Await(rc, deadline)) {
        return absl::DeadlineExceededError("write: the server took nothing in time");
      }
      if (rc != MBEDTLS_ERR_SSL_WANT_READ && rc != MBEDTLS_ERR_SSL_WANT_WRITE) {
        return absl::UnavailableError(absl::StrCat("TLS write: ", Failure(rc)));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Read(char* buf, size_t len, MonotonicDeadline deadline) override {
    for (;;) {
      const int rc = mbedtls_ssl_read(&ssl_, reinterpret_cast<unsigned char*>(buf), len);
      if (rc > 0) return static_cast<size_t>(rc);
      if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) return size_t{0};
      if (rc != MBEDTLS_ERR_SSL_WANT_READ && rc != MBEDTLS_ERR_SSL_WANT_WRITE) {
        if (rc == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
          return absl::PermissionDeniedError(absl::StrCat("TLS read: ", Failure(rc)));
        }
        return absl::UnavailableError(absl::StrCat("TLS read: ", Failure(rc)));
      }
      if (!Await(rc, deadline)) return absl::DeadlineExceededError("no reply in time");
    }
  }

  bool HasBuffered() const override { return mbedtls_ssl_get_bytes_avail(&ssl_) > 0; }

 private:
  // For a want-read/want-write result: waits for the socket; false once
  // `deadline` passed. Other results return true at once.
  bool Await(int rc, MonotonicDeadline deadline) {
    short events = 0;
    if (rc == MBEDTLS_ERR_SSL_WANT_READ) events = POLLIN;
    if (rc == MBEDTLS_ERR_SSL_WANT_WRITE) events = POLLOUT;
    if (events == 0) return true;
    return internal::WaitFor(fd_, events, deadline);
  }

  std::string Failure(int rc) const {
    if (rc == MBEDTLS_ERR_NET_SEND_FAILED || rc == MBEDTLS_ERR_NET_RECV_FAILED ||
        rc == MBEDTLS_ERR_NET_CONN_RESET) {
      return absl::StrCat(strerror(last_errno_), " (", MbedText(rc), ")");
    }
    return MbedText(rc);
  }

  absl::Status HandshakeFailure(const std::string& host, int port, int rc, MonotonicDeadline deadline) {
    const uint32_t flags = mbedtls_ssl_get_verify_result(&ssl_);
    if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags != 0 && flags != uint32_t(-1)) {
      char info[512];
      mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
      std::string text(info);
      while (!text.empty() && text.back() == '\n') text.pop_back();
      for (char& c : text) {
        if (c == '\n') c = ';';
      }
      return absl::InvalidArgumentError(
          absl::StrCat("TLS: the certificate of ", host, " was refused: ", text));
    }
    if (rc == MBEDTLS_ERR_NET_SEND_FAILED || rc == MBEDTLS_ERR_NET_RECV_FAILED ||
        rc == MBEDTLS_ERR_NET_CONN_RESET || rc == MBEDTLS_ERR_SSL_CONN_EOF) {
      // A server that refuses our certificate (or its absence) sends an
      // alert and hangs up while we still write: the alert tells.
      if (std::optional<int> alert = PendingAlert()) {
        return absl::PermissionDeniedError(
            absl::StrCat("TLS handshake with ", host, " refused by the server: alert ", *alert,
                         AlertName(*alert)));
      }
      // Hung up on without a word: a plain port (etcd closes what it
      // cannot read) is configuration, not a passing fault.
      if (ProbeProtocol(host, port, deadline) == WireProtocol::kHttp) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TLS handshake with ", host, ": the server speaks plain HTTP on this port"));
      }
      return absl::UnavailableError(
          absl::StrCat("TLS handshake with ", host, ": ", Failure(rc)));
    }
    // An alert, a protocol or certificate mismatch: the server refused us
    // (a missing or unknown client certificate ends here) or we it.
    return absl::PermissionDeniedError(
        absl::StrCat("TLS handshake with ", host, " refused: ", Failure(rc)));
  }

  // A plaintext alert record waiting on the socket (a handshake refused
  // before encryption began): its description code.
  std::optional<int> PendingAlert() const {
    unsigned char rec[7];
    const ssize_t n = recv(fd_, rec, sizeof(rec), MSG_PEEK | MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(sizeof(rec)) && rec[0] == 21 && rec[1] == 3 && rec[3] == 0 &&
        rec[4] == 2) {
      return static_cast<int>(rec[6]);
    }
    return std::nullopt;
  }

  static std::string AlertName(int alert) {
    switch (alert) {
      case 40: return " (handshake failure)";
      case 42: return " (bad certificate: the server wants a client certificate it accepts)";
      case 45: return " (certificate expired)";
      case 46: return " (certificate unknown)";
      case 48: return " (unknown CA: the server does not trust our certificate's issuer)";
      case 70: return " (protocol version)";
      case 116: return " (certificate required)";
      default: return "";
    }
  }

  bool PeerHasAddress() const {
    const mbedtls_x509_crt* peer = mbedtls_ssl_get_peer_cert(&ssl_);
    if (peer == nullptr) return false;
    for (const mbedtls_x509_sequence* san = &peer->subject_alt_names; san != nullptr;
         san = san->next) {
      if (san->buf.tag == kIpAddressTag && san->buf.len == ip_len_ &&
          memcmp(san->buf.p, ip_, ip_len_) == 0) {
        return true;
      }
    }
    return false;
  }

  static int Send(void* ctx, const unsigned char* buf, size_t len) {
    TlsStream* self = static_cast<TlsStream*>(ctx);
    for (;;) {
      const ssize_t n = send(self->fd_, buf, len, MSG_NOSIGNAL);
      if (n >= 0) return static_cast<int>(n);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return MBEDTLS_ERR_SSL_WANT_WRITE;
      self->last_errno_ = errno;
      return errno == EPIPE || errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET
                                                   : MBEDTLS_ERR_NET_SEND_FAILED;
    }
  }

  static int Recv(void* ctx, unsigned char* buf, size_t len) {
    TlsStream* self = static_cast<TlsStream*>(ctx);
    for (;;) {
      const ssize_t n = recv(self->fd_, buf, len, 0);
      if (n >= 0) return static_cast<int>(n);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return MBEDTLS_ERR_SSL_WANT_READ;
      self->last_errno_ = errno;
      return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
    }
  }

  std::shared_ptr<const TlsClientConfig> config_;
  mbedtls_ssl_context ssl_;
  bool handshaken_ = false;
  unsigned char ip_[16] = {};
  size_t ip_len_ = 0;
  int last_errno_ = 0;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const TlsClientConfig>> LoadTlsClientConfig(
    const TlsClientOptions& options) {
  auto config = std::make_shared<TlsClientConfig>();
  if (absl::Status s = config->Load(options); !s.ok()) return s;
  return std::shared_ptr<const TlsClientConfig>(std::move(config));
}

absl::StatusOr<std::unique_ptr<ByteStream>> ConnectTls(
    const std::string& host, int port, std::shared_ptr<const TlsClientConfig> config,
    MonotonicDeadline deadline) {
  absl::StatusOr<int> fd = internal::ConnectSocket(host, port, deadline);
  if (!fd.ok()) return fd.status();
  auto tls = std::make_unique<TlsStream>(*fd, std::move(config));
  if (absl::Status s = tls->Handshake(host, port, deadline); !s.ok()) return s;
  return std::unique_ptr<ByteStream>(std::move(tls));
}

}  // namespace ipclock
