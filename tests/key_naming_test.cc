// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Key naming for remote stores (src/core/key_naming.h): fixed vectors
// computed independently when the test was written, with
//
//   printf %s invoice-42 | openssl dgst -sha256 -hmac 0123456789abcdef
//   python3 -c 'import hmac,hashlib; print(hmac.new(b"0123456789abcdef",
//       b"invoice-42", hashlib.sha256).hexdigest())'
//
// (both agree), the Parse::Lock preset, secret rules (length, files,
// never echoed), the DSN options, and the once-per-process warning.

#include <sys/stat.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "core/dsn.h"
#include "core/key_naming.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Dsn;
using ipclock::KeyNaming;
using ipclock::KeyNamingOptions;
using namespace ipclock_test;

constexpr char kSecret[] = "0123456789abcdef";  // exactly 16 bytes
constexpr char kSecret2[] = "correct horse battery staple";
// HMAC-SHA256(kSecret, "invoice-42")
constexpr char kHmacInvoice[] =
    "592acdb0caa32af555a25a5adea7aafea58f3635e21b62900d0c461a8fa3d782";
// HMAC-SHA256(kSecret2, "invoice-42")
constexpr char kHmac2Invoice[] =
    "4141c335d2ef69e5d7b56f7cd7ccd47c8cc74399b36a0c062eddb6ece2aa3bd4";
// SHA-256("invoice-42")
constexpr char kShaInvoice[] =
    "3c304bc21c84147600a54c27b7bccab936b33065bc7ea051a1a9af00e3378ff3";
// HMAC-SHA256(kSecret, "\0\xff/../\n<?php %"), 14 bytes
constexpr char kHmacOdd[] =
    "dbb5df73e1a989e4ebd13e68587a4ba072b1dc6c3e05eb93abf6f45eb936a825";
// HMAC-SHA256(kSecret, 'x' * 1024) and SHA-256('x' * 1024)
constexpr char kHmacLong[] =
    "92bccdc66a0b708853f0e9f132ab1e395598950a6abc85b347b51d6fd15ec7c8";
constexpr char kShaLong[] =
    "49abd65bbf7f7e40c7055093ed2e3fd75f2f602f2c5fcf955c213e3135eb03f7";

KeyNaming Make(KeyNamingOptions::Scheme scheme, std::string prefix, std::string secret) {
  KeyNamingOptions o;
  o.scheme = scheme;
  o.prefix = std::move(prefix);
  o.secret = std::move(secret);
  absl::StatusOr<KeyNaming> n = KeyNaming::Create(o, "test-store");
  if (!n.ok()) fail_msg("KeyNaming::Create: %s", n.status().ToString().c_str());
  return *std::move(n);
}

std::string NameOf(const KeyNaming& n, absl::string_view resource) {
  absl::StatusOr<std::string> name = n.Name(resource);
  if (!name.ok()) fail_msg("Name: %s", name.status().ToString().c_str());
  return *name;
}

void PlainNames(void**) {
  KeyNaming plain = Make(KeyNamingOptions::Scheme::kPlain, "", "");
  assert_string_equal(NameOf(plain, "invoice-42").c_str(), "invoice-42");
  assert_false(plain.hashed());
  KeyNaming prefixed = Make(KeyNamingOptions::Scheme::kPlain, "app:", "");
  assert_string_equal(NameOf(prefixed, "invoice-42").c_str(), "app:invoice-42");
  // Bytes pass through untouched.
  std::string odd("\0\xff/../\n<?php %", 15);
  assert_true(NameOf(plain, odd) == odd);
  ASSERT_CODE(plain.Name(""), absl::StatusCode::kInvalidArgument);
}

void HmacNames(void**) {
  KeyNaming n = Make(KeyNamingOptions::Scheme::kPlain, "", kSecret);
  assert_true(n.hashed());
  assert_string_equal(NameOf(n, "invoice-42").c_str(), kHmacInvoice);
  assert_string_equal(NameOf(n, std::string("\0\xff/../\n<?php %", 14)).c_str(), kHmacOdd);
  assert_string_equal(NameOf(n, std::string(1024, 'x')).c_str(), kHmacLong);
  KeyNaming p = Make(KeyNamingOptions::Scheme::kPlain, "app:", kSecret);
  assert_string_equal(NameOf(p, "invoice-42").c_str(), absl::StrCat("app:", kHmacInvoice).c_str());
  KeyNaming other = Make(KeyNamingOptions::Scheme::kPlain, "", kSecret2);
  assert_string_equal(NameOf(other, "invoice-42").c_str(), kHmac2Invoice);
  // Plain mode takes long names (the Key's limit applies, not Parse::Lock's).
  assert_int_equal(NameOf(n, std::string(5000, 'y')).size(), 64);
}

void ParseLockPreset(void**) {
  KeyNaming keyed = Make(KeyNamingOptions::Scheme::kParseLock, "", kSecret);
  assert_string_equal(NameOf(keyed, "invoice-42").c_str(),
                      absl::StrCat("parse-stack:lock:v1:", kHmacInvoice).c_str());
  KeyNaming unkeyed = Make(KeyNamingOptions::Scheme::kParseLock, "", "");
  assert_true(unkeyed.hashed());
  assert_string_equal(NameOf(unkeyed, "invoice-42").c_str(),
                      absl::StrCat("parse-stack:lock:v1:", kShaInvoice).c_str());
  // Up to 1024 bytes, as Parse::Lock; longer is refused.
  assert_string_equal(NameOf(keyed, std::string(1024, 'x')).c_str(),
                      absl::StrCat("parse-stack:lock:v1:", kHmacLong).c_str());
  assert_string_equal(NameOf(unkeyed, std::string(1024, 'x')).c_str(),
                      absl::StrCat("parse-stack:lock:v1:", kShaLong).c_str());
  ASSERT_CODE(keyed.Name(std::string(1025, 'x')), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(unkeyed.Name(""), absl::StatusCode::kInvalidArgument);
  // The preset fixes the prefix.
  KeyNamingOptions o;
  o.scheme = KeyNamingOptions::Scheme::kParseLock;
  o.prefix = "mine:";
  ASSERT_CODE(KeyNaming::Create(o, "s"), absl::StatusCode::kInvalidArgument);
}

void ShortSecretsAreRefusedWithoutEcho(void**) {
  const std::string short_secret = "fifteen-bytes!!";  // 15 bytes
  assert_int_equal(short_secret.size(), 15);
  KeyNamingOptions o;
  o.secret = short_secret;
  absl::StatusOr<KeyNaming> n = KeyNaming::Create(o, "test-store");
  ASSERT_CODE(n, absl::StatusCode::kInvalidArgument);
  assert_null(strstr(n.status().ToString().c_str(), short_secret.c_str()));
  assert_null(strstr(n.status().ToString().c_str(), "15"));  // nor its length
  ASSERT_OK(ipclock::ValidateSecret(kSecret, "s"));
}

std::string WriteTemp(const std::string& content) {
  std::string path = absl::StrCat(MakeTempDir(), "/secret");
  if (!WriteFile(path, content)) fail_msg("cannot write %s", path.c_str());
  return path;
}

void SecretFiles(void**) {
  // One trailing newline (echo, editors) is not part of the secret.
  for (const char* content : {"0123456789abcdef", "0123456789abcdef\n", "0123456789abcdef\r\n"}) {
    absl::StatusOr<std::string> s = ipclock::ReadSecretFile(WriteTemp(content), "s");
    ASSERT_OK(s);
    assert_string_equal(s->c_str(), kSecret);
  }
  // Only one: a secret may end in whitespace.
  absl::StatusOr<std::string> two = ipclock::ReadSecretFile(WriteTemp("0123456789abcdef\n\n"), "s");
  ASSERT_OK(two);
  assert_int_equal(two->size(), 17);

  absl::StatusOr<std::string> missing = ipclock::ReadSecretFile("/nonexistent/ipclock-secret", "s");
  // A file an option names that is not there: a configuration fault.
  ASSERT_CODE(missing, absl::StatusCode::kInvalidArgument);
  assert_non_null(strstr(missing.status().ToString().c_str(), "/nonexistent/ipclock-secret"));

  const std::string short_content = "tooshort-secret";
  absl::StatusOr<std::string> short_file = ipclock::ReadSecretFile(WriteTemp(short_content + "\n"), "s");
  ASSERT_CODE(short_file, absl::StatusCode::kInvalidArgument);
  assert_null(strstr(short_file.status().ToString().c_str(), short_content.c_str()));
  ASSERT_CODE(ipclock::ReadSecretFile(WriteTemp(""), "s"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::ReadSecretFile(WriteTemp(std::string(5000, 'k')), "s"),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::ReadSecretFile(MakeTempDir(), "s"), absl::StatusCode::kInvalidArgument);
  // A FIFO is refused at once, never waited on for a writer.
  const std::string fifo = MakeTempDir() + "/secret.fifo";
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  const double started = NowSeconds();
  absl::StatusOr<std::string> from_fifo = ipclock::ReadSecretFile(fifo, "s");
  ASSERT_CODE(from_fifo, absl::StatusCode::kInvalidArgument);
  assert_true(NowSeconds() - started < 5);
  assert_non_null(strstr(from_fifo.status().ToString().c_str(), "expected a regular file"));
}

absl::StatusOr<KeyNamingOptions> FromDsn(const std::string& text) {
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) fail_msg("Dsn::Parse: %s", dsn.status().ToString().c_str());
  absl::StatusOr<KeyNamingOptions> o = ipclock::KeyNamingOptionsFromDsn(*dsn, "s");
  if (o.ok()) {
    absl::Status unused = dsn->CheckAllOptionsUsed();
    if (!unused.ok()) fail_msg("%s", unused.ToString().c_str());
  }
  return o;
}

void DsnOptions(void**) {
  absl::StatusOr<KeyNamingOptions> o = FromDsn("redis://h");
  ASSERT_OK(o);
  assert_true(o->secret.empty());
  assert_false(o->secret_none);
  o = FromDsn(absl::StrCat("redis://h?prefix=app%3A&secret=", kSecret));
  ASSERT_OK(o);
  assert_string_equal(o->prefix.c_str(), "app:");
  assert_string_equal(o->secret.c_str(), kSecret);
  o = FromDsn(absl::StrCat("redis://h?secret_file=", WriteTemp(absl::StrCat(kSecret2, "\n"))));
  ASSERT_OK(o);
  assert_string_equal(o->secret.c_str(), kSecret2);
  o = FromDsn("redis://h?secret=none");
  ASSERT_OK(o);
  assert_true(o->secret_none);
  assert_true(o->secret.empty());
  o = FromDsn("redis://h?naming=parse-lock");
  ASSERT_OK(o);
  assert_true(o->scheme == KeyNamingOptions::Scheme::kParseLock);
  ASSERT_CODE(FromDsn("redis://h?naming=md5"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(FromDsn(absl::StrCat("redis://h?secret=", kSecret, "&secret_file=/x")),
              absl::StatusCode::kInvalidArgument);
  absl::StatusOr<KeyNamingOptions> shorty = FromDsn("redis://h?secret=hunter2");
  ASSERT_CODE(shorty, absl::StatusCode::kInvalidArgument);
  assert_null(strstr(shorty.status().ToString().c_str(), "hunter2"));
  // The DSN's redacted form hides a secret in the query.
  absl::StatusOr<Dsn> dsn = Dsn::Parse(absl::StrCat("redis://h?prefix=a&secret=", kSecret, "&format=simple"));
  ASSERT_OK(dsn);
  assert_null(strstr(dsn->redacted().c_str(), kSecret));
  assert_non_null(strstr(dsn->redacted().c_str(), "secret=***&format=simple"));
  // Symfony's password-only userinfo is hidden too.
  dsn = Dsn::Parse("redis://hunter2hunter2@h:6379");
  ASSERT_OK(dsn);
  assert_null(strstr(dsn->redacted().c_str(), "hunter2"));
}

// Runs `body` in a child whose stderr goes to a file; returns the file.
std::string StderrOf(const std::function<void()>& body) {
  const std::string path = absl::StrCat(MakeTempDir(), "/stderr");
  pid_t pid = ForkChild([&] {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0) return 2;
    body();
    fflush(stderr);
    return 0;
  });
  assert_int_equal(WaitChild(pid), 0);
  return ReadFileOrEmpty(path);
}

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

void WarnsOncePerProcess(void**) {
  std::string out = StderrOf([] {
    KeyNaming plain = Make(KeyNamingOptions::Scheme::kPlain, "", "");
    ipclock::WarnIfNoSecret(plain, "redis://a:1");
    ipclock::WarnIfNoSecret(plain, "redis://b:2");
  });
  assert_int_equal(CountOf(out, "ipclock: warning:"), 1);
  assert_non_null(strstr(out.c_str(), "redis://a:1"));
  assert_non_null(strstr(out.c_str(), "secret=none"));
  out = StderrOf([] {
    KeyNaming keyed = Make(KeyNamingOptions::Scheme::kPlain, "", kSecret);
    ipclock::WarnIfNoSecret(keyed, "redis://a:1");
    KeyNamingOptions o;
    o.secret_none = true;
    ipclock::WarnIfNoSecret(*KeyNaming::Create(o, "s"), "redis://a:1");
  });
  assert_int_equal(CountOf(out, "ipclock: warning:"), 0);
  assert_null(strstr(out.c_str(), kSecret));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(PlainNames),
      cmocka_unit_test(HmacNames),
      cmocka_unit_test(ParseLockPreset),
      cmocka_unit_test(ShortSecretsAreRefusedWithoutEcho),
      cmocka_unit_test(SecretFiles),
      cmocka_unit_test(DsnOptions),
      cmocka_unit_test(WarnsOncePerProcess),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
