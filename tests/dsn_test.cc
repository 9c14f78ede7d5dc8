// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// DSN parsing and StoreFromDsn's handling of bad DSNs.

#include <stdlib.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "core/dsn.h"
#include "ipclock_config.h"
#include "ipclock/admin/inspect.h"
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
      // Encoded option names are the same options.
      "redis://h?s%65cret=hunter2hunter2",
      "postgresql+advisory://u@h/db?pass%77ord=hunter2hunter2&x=1",
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

// Every DSN field ends up in a C string (a path, a libpq conninfo, a Redis
// host) where a NUL would cut it short, or in a message where a control byte
// would reach a terminal. Each field, with each kind of control byte, raw and
// percent-encoded in both cases of hex, is refused with InvalidArgument, by
// the parser and by every entry point that takes a DSN; and no message
// carries the byte raw.
void ControlBytesRefusedInEveryField(void**) {
  // "{}" marks where the byte goes.
  const char* const fields[] = {
      "fl{}ock",                                        // scheme
      "postgresql+advisory://ap{}p:pw@127.0.0.1:1/db",  // user
      "redis://u:pa{}ss@127.0.0.1:1",                   // password
      "redis://ho{}st:1",                               // host
      "redis://[::{}1]:1",                              // IPv6 host
      "redis://127.0.0.1:1{}2",                         // port
      "flock:///x/lo{}cks",                             // path
      "postgresql+advisory://u@127.0.0.1:1/d{}b",       // database (path)
      "flock:///x?re{}cord=1",                          // option name
      "flock:///x?record=tr{}ue",                       // option value
      "semaphore?mode=06{}66",                          // bare name's option
      "combined:?store1=flock:///a{}b&store2=in-memory",  // nested DSN
  };
  const unsigned char bytes[] = {0x00, 0x01, 0x07, 0x08, 0x09, 0x0a,
                                 0x0d, 0x1b, 0x1f, 0x7f};
  for (const char* field : fields) {
    for (unsigned char byte : bytes) {
      std::vector<std::string> forms = {std::string(1, static_cast<char>(byte)),
                                        absl::StrFormat("%%%02x", byte),
                                        absl::StrFormat("%%%02X", byte)};
      // A nested DSN decoded twice: "%2500" is "%00" once the outer query
      // is decoded.
      if (absl::StrContains(field, "combined:")) {
        forms.push_back(absl::StrFormat("%%25%02x", byte));
      }
      for (const std::string& form : forms) {
        const std::string dsn = absl::StrReplaceAll(field, {{"{}", form}});
        const std::string shown = absl::StrFormat("%s with byte 0x%02x as %s", field, byte,
                                                  form.size() == 1 ? "raw" : form.c_str());
        const absl::Status parsed = Dsn::Parse(dsn).status();
        const absl::Status built = ipclock::StoreFromDsn(dsn).status();
        const absl::Status listed = ipclock::ListHeldLocks(dsn).status();
        const absl::Status found = ipclock::FindStore(dsn).status();
        // Decoded twice, the outer DSN is fine: its nested store refuses.
        const bool nested = absl::StartsWith(form, "%25");
        std::vector<const absl::Status*> checked = {&built};
        if (!nested) checked = {&parsed, &built, &listed, &found};
        for (const absl::Status* s : checked) {
          if (s->code() != absl::StatusCode::kInvalidArgument) {
            fail_msg("%s: expected InvalidArgument, got %s", shown.c_str(),
                     s->ToString().c_str());
          }
          for (char c : s->message()) {
            const unsigned char u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7f) {
              fail_msg("%s: the message carries byte 0x%02x raw", shown.c_str(), u);
            }
          }
        }
      }
    }
  }
}

// A NUL must never cut a value short: what comes before it is not a valid
// DSN of its own that would be used instead.
void NulNeverTruncates(void**) {
  const std::string dir = ipclock_test::MakeTempDir();
  for (const std::string& dsn :
       {absl::StrCat("flock://", dir, "/lo%00cks"), absl::StrCat("flock://", dir, "/lo"),
        std::string("flock://") + dir + "/lo" + std::string(1, '\0') + "cks"}) {
    if (dsn.find("%00") == std::string::npos && dsn.find('\0') == std::string::npos) {
      continue;  // the truncated form is only named to check it is not made
    }
    ASSERT_CODE(ipclock::StoreFromDsn(dsn), absl::StatusCode::kInvalidArgument);
    ASSERT_CODE(ipclock::ListHeldLocks(dsn), absl::StatusCode::kInvalidArgument);
  }
  struct stat st;
  if (stat((dir + "/lo").c_str(), &st) == 0) fail_msg("%s/lo was created", dir.c_str());
}

// Against the PostgreSQL server of tools/test-servers: the user and the
// database of a working DSN with "%00x" appended must be refused, never
// connected as the part before the NUL (which would succeed).
void PostgresNulInUserOrDatabase(void**) {
  if (!IPCLOCK_HAVE_POSTGRES) {
    print_message("skipped: the postgres store is not in this build\n");
    skip();
  }
  const char* env = getenv("IPCLOCK_TEST_POSTGRES");
  if (env == nullptr || env[0] == '\0') {
    if (getenv("CI") != nullptr && std::string(getenv("CI")) == "true") {
      fail_msg("IPCLOCK_TEST_POSTGRES is not set");
    }
    skip();
  }
  absl::StatusOr<Dsn> good = Dsn::Parse(env);
  ASSERT_OK(good);
  const auto built = ipclock::StoreFromDsn(env);
  if (!built.ok() && built.status().code() == absl::StatusCode::kUnimplemented) skip();
  ASSERT_OK(built);  // the control: the DSN as given connects
  const std::string text = env;
  const size_t at = text.find('@');
  const size_t colon = text.find(':', text.find("://") + 3);
  assert_true(at != std::string::npos && colon != std::string::npos && colon < at);
  const std::string user_nul = text.substr(0, colon) + "%00x" + text.substr(colon);
  const size_t slash = text.find('/', at);
  assert_true(slash != std::string::npos);
  const size_t query = text.find('?', slash);
  const size_t db_end = query == std::string::npos ? text.size() : query;
  const std::string db_nul = text.substr(0, db_end) + "%00x" + text.substr(db_end);
  const std::string host_nul = text.substr(0, at + 1) + "127.0.0.1%00.example" +
                               text.substr(text.find(':', at));
  for (const std::string& dsn : {user_nul, db_nul, host_nul}) {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
    if (store.ok()) fail_msg("connected with a NUL in the DSN: %s", dsn.c_str());
    ASSERT_CODE(store, absl::StatusCode::kInvalidArgument);
  }
}

// Every server list (ZooKeeper, etcd, memcached's host[...], cluster DSNs)
// is cut by one function: at the last ':' outside brackets.
void ServersAreCutAtTheLastColonOutsideBrackets(void**) {
  struct Case {
    const char* server;
    const char* host;
    const char* port;  // nullptr: no ':'
    bool malformed;
  };
  for (const Case& c : std::vector<Case>{{"h", "h", nullptr, false},
                                         {"h:2181", "h", "2181", false},
                                         {"h:", "h", "", false},
                                         {":1", "", "1", false},
                                         {"/run/mc.sock:", "/run/mc.sock", "", false},
                                         {"[::1]:2379", "::1", "2379", false},
                                         {"[::1]", "::1", nullptr, false},
                                         {"[::1", "", nullptr, true},
                                         {"[::1]x:1", "::1", nullptr, true}}) {
    ipclock::HostPortText got = ipclock::SplitHostPort(c.server);
    if (got.host != c.host || got.port.has_value() != (c.port != nullptr) ||
        (c.port != nullptr && *got.port != c.port) || got.malformed != c.malformed) {
      fail_msg("%s: host \"%s\", port %s, malformed %d", c.server, got.host.c_str(),
               got.port ? got.port->c_str() : "(none)", got.malformed);
    }
  }
  // A DSN's authority is cut the same way: an IPv6 host without a port
  // takes the store's default, as any host does.
  absl::StatusOr<Dsn> v6 = Dsn::Parse("redis://[::1]/0");
  ASSERT_OK(v6);
  assert_string_equal(v6->host().c_str(), "::1");
  assert_int_equal(v6->port(), 0);
  ASSERT_CODE(Dsn::Parse("redis://[::1]x/0"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(Dsn::Parse("redis://h:+80/0"), absl::StatusCode::kInvalidArgument);
  assert_int_equal(*ipclock::PortNumber("65535"), 65535);
  for (const char* bad : {"", "0", "65536", "-1", "+80", "80x", " 80", "080808"}) {
    if (ipclock::PortNumber(bad)) fail_msg("port \"%s\" accepted", bad);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(BareScheme),
      cmocka_unit_test(BareSchemeWithOptions),
      cmocka_unit_test(FullUrl),
      cmocka_unit_test(Ipv6AndSocketPaths),
      cmocka_unit_test(ServersAreCutAtTheLastColonOutsideBrackets),
      cmocka_unit_test(Malformed),
      cmocka_unit_test(OptionHelpersCheckValues),
      cmocka_unit_test(StoreFromDsnRefusesBadInput),
      cmocka_unit_test(RedactionCoversQueryAndNestedDsns),
      cmocka_unit_test(PasswordNeverInErrors),
      cmocka_unit_test(ControlBytesRefusedInEveryField),
      cmocka_unit_test(NulNeverTruncates),
      cmocka_unit_test(PostgresNulInUserOrDatabase),
  };
  return cmocka_run_group_tests_name("dsn", tests, nullptr, nullptr);
}
