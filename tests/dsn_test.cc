// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// DSN parsing and StoreFromDsn's handling of bad DSNs.

#include <string>

#include "core/dsn.h"
#include "ipclock/store_factory.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Dsn;

void BareScheme(void**) {
  absl::StatusOr<Dsn> d = Dsn::Parse("flock");
  ASSERT_OK(d);
  assert_string_equal(d->scheme().c_str(), "flock");
  assert_false(d->has_authority());
  assert_true(d->path().empty());
}

void BareSchemeWithOptions(void**) {
  absl::StatusOr<Dsn> d = Dsn::Parse("semaphore?key_scheme=xxh3&mode=0666");
  ASSERT_OK(d);
  assert_string_equal(d->scheme().c_str(), "semaphore");
  assert_true(d->path().empty());
  assert_string_equal(d->TakeOption("key_scheme")->c_str(), "xxh3");
  assert_string_equal(d->TakeOption("mode")->c_str(), "0666");
  ASSERT_OK(d->CheckAllOptionsUsed());
}

void FullUrl(void**) {
  absl::StatusOr<Dsn> d =
      Dsn::Parse("redis://app%40x:s3cr%2Ft@cache.local:6380/2?timeout=1.5&format=simple");
  ASSERT_OK(d);
  assert_string_equal(d->scheme().c_str(), "redis");
  assert_string_equal(d->user().c_str(), "app@x");
  assert_string_equal(d->password().c_str(), "s3cr/t");
  assert_string_equal(d->host().c_str(), "cache.local");
  assert_int_equal(d->port(), 6380);
  assert_string_equal(d->path().c_str(), "/2");
  absl::StatusOr<double> t = d->TakeSeconds("timeout", 0);
  ASSERT_OK(t);
  assert_true(*t == 1.5);
  assert_string_equal(d->TakeOption("format")->c_str(), "simple");
  ASSERT_OK(d->CheckAllOptionsUsed());
  // The password never shows in the redacted form.
  assert_null(strstr(d->redacted().c_str(), "s3cr"));
  assert_non_null(strstr(d->redacted().c_str(), "***"));
}

void Ipv6AndSocketPaths(void**) {
  absl::StatusOr<Dsn> d = Dsn::Parse("redis://[::1]:7000");
  ASSERT_OK(d);
  assert_string_equal(d->host().c_str(), "::1");
  assert_int_equal(d->port(), 7000);
  d = Dsn::Parse("redis:///run/redis/redis.sock");
  ASSERT_OK(d);
  assert_true(d->host().empty());
  assert_string_equal(d->path().c_str(), "/run/redis/redis.sock");
  d = Dsn::Parse("flock:///var/lock/my%20app");
  ASSERT_OK(d);
  assert_string_equal(d->path().c_str(), "/var/lock/my app");
}

void Malformed(void**) {
  const char* bad[] = {"",          "flo ck",          "1flock",
                       "redis://h:0", "redis://h:99999", "redis://h:x",
                       "redis://[::1", "flock:///a%zz",  "flock:///a?x=1&x=2",
                       "flock:///a#frag", "in-memory?=1", "fl\x01ock"};
  for (const char* text : bad) {
    absl::StatusOr<Dsn> d = Dsn::Parse(text);
    if (d.ok()) fail_msg("accepted bad DSN \"%s\"", text);
    ASSERT_CODE(d, absl::StatusCode::kInvalidArgument);
  }
}

void OptionHelpersCheckValues(void**) {
  absl::StatusOr<Dsn> d = Dsn::Parse("flock:///x?file_mode=0999&record=maybe&n=12");
  ASSERT_OK(d);
  ASSERT_CODE(d->TakeMode("file_mode", 0600), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(d->TakeBool("record", true), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(d->TakeInt("n", 1, 1, 10), absl::StatusCode::kInvalidArgument);
}

void StoreFromDsnRefusesBadInput(void**) {
  struct Case {
    const char* dsn;
    absl::StatusCode code;
    const char* must_mention;
  } cases[] = {
      {"nosuchstore", absl::StatusCode::kInvalidArgument, "unknown store"},
      {"flock:///tmp/x?colour=blue", absl::StatusCode::kInvalidArgument, "colour"},
      {"flock://relative/dir", absl::StatusCode::kInvalidArgument, "three slashes"},
      {"flock:relative", absl::StatusCode::kInvalidArgument, "absolute"},
      {"flock:///tmp/x?naming=weird", absl::StatusCode::kInvalidArgument, "naming"},
      {"in-memory://host", absl::StatusCode::kInvalidArgument, "in-memory"},
  };
  for (const Case& c : cases) {
    auto store = ipclock::StoreFromDsn(c.dsn);
    if (store.ok()) fail_msg("StoreFromDsn accepted \"%s\"", c.dsn);
    ASSERT_CODE(store, c.code);
    if (strstr(std::string(store.status().message()).c_str(), c.must_mention) == nullptr) {
      fail_msg("error for \"%s\" does not mention \"%s\": %s", c.dsn, c.must_mention,
               store.status().ToString().c_str());
    }
  }
}

void RedactionCoversQueryAndNestedDsns(void**) {
  const char* cases[] = {
      "postgresql+advisory://u@h/db?password=hunter2hunter2&x=1",
      "redis://h?secret=hunter2hunter2",
      "combined:?strategy=consensus&store1=redis%3A%2F%2Fu%3Ahunter2hunter2%40h&store2=in-memory",
      "combined:?store1=redis://u:hunter2hunter2@h:1&store2=flock",
      "redis://hunter2hunter2@h",
      "redis://u:hunter2hunter2@h:6379/0?bogus=1",
  };
  for (const char* text : cases) {
    absl::StatusOr<Dsn> d = Dsn::Parse(text);
    std::string shown = d.ok() ? d->redacted() : std::string(d.status().message());
    if (shown.find("hunter2") != std::string::npos) fail_msg("leaked: %s", shown.c_str());
    auto store = ipclock::StoreFromDsn(text);
    if (!store.ok() &&
        std::string(store.status().message()).find("hunter2") != std::string::npos) {
      fail_msg("StoreFromDsn leaked: %s", store.status().ToString().c_str());
    }
  }
  // Harmless options stay readable.
  absl::StatusOr<Dsn> d = Dsn::Parse("flock:///x?file_mode=0600");
  ASSERT_OK(d);
  assert_string_equal(d->redacted().c_str(), "flock:///x?file_mode=0600");
}

void PasswordNeverInErrors(void**) {
  auto store = ipclock::StoreFromDsn("redis://u:hunter2hunter2@127.0.0.1:1/0?bogus=1");
  assert_false(store.ok());
  assert_null(strstr(std::string(store.status().message()).c_str(), "hunter2"));
  store = ipclock::StoreFromDsn("postgresql+advisory://u:hunter2hunter2@127.0.0.1:1/db?bogus=1");
  assert_false(store.ok());
  assert_null(strstr(std::string(store.status().message()).c_str(), "hunter2"));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(BareScheme),
      cmocka_unit_test(BareSchemeWithOptions),
      cmocka_unit_test(FullUrl),
      cmocka_unit_test(Ipv6AndSocketPaths),
      cmocka_unit_test(Malformed),
      cmocka_unit_test(OptionHelpersCheckValues),
      cmocka_unit_test(StoreFromDsnRefusesBadInput),
      cmocka_unit_test(RedactionCoversQueryAndNestedDsns),
      cmocka_unit_test(PasswordNeverInErrors),
  };
  return cmocka_run_group_tests_name("dsn", tests, nullptr, nullptr);
}
