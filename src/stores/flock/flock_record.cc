// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/flock/flock_record.h"

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "stores/flock/flock_file.h"
#include "stores/flock/flock_store.h"

namespace ipclock {

namespace {

// "ipclock-flock/1 fence=00000000000000000000 held=0 pid=000000000\n"
//  0                     22                  42    48 49   54       63
constexpr absl::string_view kMagic = "ipclock-flock/1 fence=";
constexpr size_t kFenceOffset = 22;
constexpr size_t kFenceDigits = 20;
constexpr absl::string_view kHeldLabel = " held=";
constexpr size_t kHeldLabelOffset = 42;
constexpr size_t kHeldOffset = 48;
constexpr absl::string_view kPidLabel = " pid=";
constexpr size_t kPidLabelOffset = 49;
constexpr size_t kPidOffset = 54;
constexpr size_t kPidDigits = 9;
static_assert(kPidOffset + kPidDigits + 1 == kFlockRecordSize, "record layout");

// Up to 20 digits. The record is parsed on every acquisition: one check for
// overflow at the end, not a division per digit.
bool ParseDigits(const char* p, size_t n, uint64_t* out) {
  uint64_t v = 0;
  for (size_t i = 0; i + 1 < n; ++i) {  // at most 19 digits: below 2^64
    const unsigned d = static_cast<unsigned char>(p[i]) - '0';
    if (d > 9) return false;
    v = v * 10 + d;
  }
  const unsigned last = static_cast<unsigned char>(p[n - 1]) - '0';
  if (last > 9) return false;
  if (v > (UINT64_MAX - last) / 10) return false;  // more than 64 bits
  *out = v * 10 + last;
  return true;
}

// "00" to "99": two digits per division by a constant.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";

void FormatDigits(uint64_t v, size_t n, char* p) {
  while (n >= 2) {
    const size_t pair = static_cast<size_t>(v % 100) * 2;
    v /= 100;
    n -= 2;
    p[n] = kDigitPairs[pair];
    p[n + 1] = kDigitPairs[pair + 1];
  }
  if (n == 1) p[0] = static_cast<char>('0' + v % 10);
}

}  // namespace

bool ParseFlockRecord(const char* b, FlockRecordFields* out) {
  if (memcmp(b, kMagic.data(), kMagic.size()) != 0 ||
      memcmp(b + kHeldLabelOffset, kHeldLabel.data(), kHeldLabel.size()) != 0 ||
      memcmp(b + kPidLabelOffset, kPidLabel.data(), kPidLabel.size()) != 0 ||
      b[kFlockRecordSize - 1] != '\n') {
    return false;
  }
  if (b[kHeldOffset] != '0' && b[kHeldOffset] != '1') return false;
  FlockRecordFields r;
  uint64_t pid = 0;
  if (!ParseDigits(b + kFenceOffset, kFenceDigits, &r.fence) ||
      !ParseDigits(b + kPidOffset, kPidDigits, &pid)) {
    return false;
  }
  r.held = b[kHeldOffset] == '1';
  r.pid = static_cast<pid_t>(pid);
  *out = r;
  return true;
}

void FormatFlockRecord(const FlockRecordFields& f, char* out) {
  memcpy(out, kMagic.data(), kMagic.size());
  FormatDigits(f.fence, kFenceDigits, out + kFenceOffset);
  memcpy(out + kHeldLabelOffset, kHeldLabel.data(), kHeldLabel.size());
  out[kHeldOffset] = f.held ? '1' : '0';
  memcpy(out + kPidLabelOffset, kPidLabel.data(), kPidLabel.size());
  FormatDigits(static_cast<uint64_t>(f.pid), kPidDigits, out + kPidOffset);
  out[kFlockRecordSize - 1] = '\n';
}

void UpdateFlockRecord(char* out, const FlockRecordFields& from, const FlockRecordFields& to) {
  if (to.fence == from.fence + 1 && to.fence != 0) {
    // Add one to the decimal digits in place; a carry past the first digit
    // cannot happen, since the new fence fits in 64 bits (< 10^20).
    char* digit = out + kFenceOffset + kFenceDigits - 1;
    while (*digit == '9') *digit-- = '0';
    ++*digit;
  } else if (to.fence != from.fence) {
    FormatDigits(to.fence, kFenceDigits, out + kFenceOffset);
  }
  out[kHeldOffset] = to.held ? '1' : '0';
  if (to.pid != from.pid) {
    FormatDigits(static_cast<uint64_t>(to.pid), kPidDigits, out + kPidOffset);
  }
}

namespace {
constexpr absl::string_view kNameMagic = "ipclock-name/1 ";
constexpr size_t kNameHeader = 19;  // the magic, 3 digits, '\n'
}  // namespace

std::string FormatFlockName(absl::string_view resource) {
  if (kFlockNameOffset + kNameHeader + resource.size() > kFlockQueueOffset) return "";
  return absl::StrCat(kNameMagic, absl::StrFormat("%03u", resource.size()), "\n", resource);
}

std::optional<std::string> ParseFlockName(absl::string_view head) {
  if (head.size() < kFlockNameOffset + kNameHeader) return std::nullopt;
  absl::string_view block = head.substr(kFlockNameOffset);
  size_t size = 0;
  if (!absl::ConsumePrefix(&block, kNameMagic) || block[3] != '\n' ||
      !absl::SimpleAtoi(block.substr(0, 3), &size) || block.size() < 4 + size) {
    return std::nullopt;
  }
  return std::string(block.substr(4, size));
}

size_t FlockHolderRecordSize() { return kFlockRecordSize; }

bool ParseFlockHolderRecord(absl::string_view bytes, FlockHolderRecord* out) {
  if (bytes.size() < kFlockRecordSize) return false;
  FlockRecordFields f;
  if (!ParseFlockRecord(bytes.data(), &f)) return false;
  out->fence = f.fence;
  out->held = f.held;
  out->pid = f.pid;
  return true;
}

}  // namespace ipclock
