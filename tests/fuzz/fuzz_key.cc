// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes Key::Deserialize. Random bytes almost never carry a valid checksum,
// which would keep the fuzzer at the first check; so when the input starts
// with '!', the rest is taken as a body and given its checksum, and the
// field parsers behind the check get fuzzed too. A key that parses must
// survive a round trip through Serialize.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/hashing.h"
#include "ipclock/spi/key.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::string text(input);
  if (!input.empty() && input[0] == '!') {
    absl::string_view body = input.substr(1);
    // The checksum's length is part of the format: 16 hex digits.
    text = absl::StrCat(body, " ", ipclock::ToHex(ipclock::Sha256(body)).substr(0, 16));
  }
  absl::StatusOr<ipclock::Key> key = ipclock::Key::Deserialize(text);
  if (!key.ok()) return 0;
  const std::string resource = key->resource();
  absl::StatusOr<std::string> again = key->Serialize();
  if (!again.ok()) abort();
  absl::StatusOr<ipclock::Key> back = ipclock::Key::Deserialize(*again);
  if (!back.ok() || back->resource() != resource || back->fence() != key->fence()) {
    abort();
  }
  return 0;
}
