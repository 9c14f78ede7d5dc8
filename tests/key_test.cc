// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Key: resource validation, tokens, leases, serialization.

#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/time/clock.h"
#include "ipclock/spi/key.h"
#include "ipclock/spi/key_state.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Key;
using ipclock::KeyOptions;
using ipclock::KeyWriter;

void ValidatesResource(void**) {
  ASSERT_CODE(Key::Create(""), absl::StatusCode::kInvalidArgument);
  ASSERT_OK(Key::Create(std::string(1024, 'a')));
  absl::StatusOr<Key> too_long = Key::Create(std::string(1025, 'a'));
  ASSERT_CODE(too_long, absl::StatusCode::kInvalidArgument);
  // The message says what the limit is and how to change it.
  assert_non_null(strstr(std::string(too_long.status().message()).c_str(), "1024"));
  assert_non_null(strstr(std::string(too_long.status().message()).c_str(),
                         "max_resource_bytes"));
  KeyOptions roomy;
  roomy.max_resource_bytes = 4096;
  ASSERT_OK(Key::Create(std::string(4096, 'a'), roomy));
  ASSERT_OK(Key::Create(std::string("\0\x01\xff", 3)));
}

void TokensAreRandomBase64(void**) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<Key> key = Key::Create("k");
    ASSERT_OK(key);
    assert_false(key->has_token());
    absl::StatusOr<absl::string_view> token = key->Token();
    ASSERT_OK(token);
    assert_int_equal(token->size(), 44);
    std::string raw;
    assert_true(absl::Base64Unescape(*token, &raw));
    assert_int_equal(raw.size(), 32);
    // Stable once made.
    assert_true(*key->Token() == *token);
    seen.insert(std::string(*token));
  }
  assert_int_equal(seen.size(), 100);
}

void LeaseArithmetic(void**) {
  absl::StatusOr<Key> key = Key::Create("lease");
  ASSERT_OK(key);
  assert_false(key->has_expiry());
  assert_true(key->RemainingLifetime() == absl::InfiniteDuration());
  KeyWriter(*key).ReduceLifetime(absl::Seconds(10));
  KeyWriter(*key).ReduceLifetime(absl::Seconds(20));  // never extends
  assert_true(key->RemainingLifetime() <= absl::Seconds(10));
  assert_true(key->RemainingLifetime() > absl::Seconds(9));
  KeyWriter(*key).ReduceLifetime(absl::ZeroDuration());
  assert_true(key->IsExpired());
  assert_true(key->RemainingLifetime() == absl::ZeroDuration());
  KeyWriter(*key).ResetLifetime();
  assert_false(key->IsExpired());
}

void SerializationRoundTrips(void**) {
  std::string resource("inv\0oice \xff 42", 13);
  absl::StatusOr<Key> key = Key::Create(resource);
  ASSERT_OK(key);
  KeyWriter(*key).ReduceLifetime(absl::Seconds(60));
  KeyWriter(*key).set_fence(77);
  absl::StatusOr<std::string> text = key->Serialize();
  ASSERT_OK(text);
  absl::StatusOr<Key> back = Key::Deserialize(*text);
  ASSERT_OK(back);
  assert_true(back->resource() == resource);
  assert_true(*back->Token() == *key->Token());
  assert_true(back->fence().has_value() && *back->fence() == 77);
  assert_true(back->RemainingLifetime() > absl::Seconds(55));
  assert_true(back->RemainingLifetime() <= absl::Seconds(60));
}

void DeserializationRejectsCorruption(void**) {
  absl::StatusOr<Key> key = Key::Create("invoice-42");
  ASSERT_OK(key);
  std::string text = *key->Serialize();
  // Every single-byte change and every truncation is caught.
  for (size_t i = 0; i < text.size(); ++i) {
    std::string bad = text;
    bad[i] = bad[i] == 'A' ? 'B' : 'A';
    ASSERT_CODE(Key::Deserialize(bad), absl::StatusCode::kInvalidArgument);
    ASSERT_CODE(Key::Deserialize(text.substr(0, i)), absl::StatusCode::kInvalidArgument);
  }
  absl::StatusOr<Key> junk = Key::Deserialize("hello world");
  ASSERT_CODE(junk, absl::StatusCode::kInvalidArgument);
  assert_non_null(strstr(std::string(junk.status().message()).c_str(), "deserialize"));
}

void UnserializableKeyRefuses(void**) {
  absl::StatusOr<Key> key = Key::Create("held-by-fd");
  ASSERT_OK(key);
  KeyWriter(*key).MarkUnserializable();
  ASSERT_CODE(key->Serialize(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ValidatesResource),
      cmocka_unit_test(TokensAreRandomBase64),
      cmocka_unit_test(LeaseArithmetic),
      cmocka_unit_test(SerializationRoundTrips),
      cmocka_unit_test(DeserializationRejectsCorruption),
      cmocka_unit_test(UnserializableKeyRefuses),
  };
  return cmocka_run_group_tests_name("key", tests, nullptr, nullptr);
}
