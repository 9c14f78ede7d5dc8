// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/spi/key.h"

#include <algorithm>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/errors.h"
#include "core/hashing.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"
#include "platform/random.h"
#include "platform/wall_clock.h"

namespace ipclock {

namespace {

constexpr size_t kTokenBytes = 32;
constexpr absl::string_view kSerialMagic = "ipclock-key/1";
// Hex digits of SHA-256 kept as the serialized form's checksum. It catches
// corruption and truncation; it is not a signature.
constexpr size_t kChecksumHexDigits = 16;

absl::Status BadSerial(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("ipclock: cannot deserialize key: ", why));
}

}  // namespace

Key::Key(std::string resource) : resource_(std::move(resource)) {}
Key::Key(Key&&) noexcept = default;
Key& Key::operator=(Key&&) noexcept = default;
Key::~Key() = default;

Key Key::Twin() const {
  Key twin(resource_);
  twin.token_ = token_;
  twin.expiry_ = expiry_;
  twin.fence_ = fence_;
  twin.permits_ = permits_;
  twin.weight_ = weight_;
  twin.slots_ = slots_;
  twin.previous_owner_died_ = previous_owner_died_;
  twin.serializable_ = serializable_;
  twin.canceller_ = canceller_;
  return twin;
}

bool Key::cancelled() const { return canceller_ != nullptr && canceller_->cancelled(); }

int Key::cancel_fd() const { return canceller_ != nullptr ? canceller_->fd() : -1; }

absl::Status Key::ValidateResource(absl::string_view resource,
                                   const KeyOptions& options) {
  if (resource.empty()) {
    return absl::InvalidArgumentError(
        "ipclock: resource name is empty; a lock needs a non-empty name");
  }
  if (resource.size() > options.max_resource_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: resource ", QuoteResource(resource), " is ", resource.size(),
        " bytes; the limit is ", options.max_resource_bytes,
        " (KeyOptions::max_resource_bytes)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Key> Key::Create(absl::string_view resource,
                                const KeyOptions& options) {
  if (absl::Status s = ValidateResource(resource, options); !s.ok()) return s;
  return Key(std::string(resource));
}

absl::StatusOr<absl::string_view> Key::Token() {
  if (token_.empty()) {
    unsigned char raw[kTokenBytes];
    if (absl::Status s = FillRandom(raw, sizeof(raw)); !s.ok()) return s;
    token_ = absl::Base64Escape(
        absl::string_view(reinterpret_cast<const char*>(raw), sizeof(raw)));
  }
  return absl::string_view(token_);
}

void Key::ReduceLifetime(absl::Duration ttl) {
  Deadline candidate = Deadline::In(ttl);
  if (!expiry_ || candidate < *expiry_) expiry_ = candidate;
}

absl::Duration Key::RemainingLifetime() const {
  if (!expiry_) return absl::InfiniteDuration();
  return expiry_->Remaining();
}

void Key::set_state(const Store* store, std::unique_ptr<KeyState> state) {
  for (StateEntry& e : states_) {
    if (e.store == store) {
      e.state = std::move(state);
      return;
    }
  }
  states_.push_back(StateEntry{store, std::move(state)});
}

std::unique_ptr<KeyState> Key::take_state(const Store* store) {
  for (auto it = states_.begin(); it != states_.end(); ++it) {
    if (it->store == store) {
      std::unique_ptr<KeyState> out = std::move(it->state);
      states_.erase(it);
      return out;
    }
  }
  return nullptr;
}

// Form: "ipclock-key/1 <b64 resource> <token> <expiry> <fence> <checksum>",
// expiry as Unix milliseconds of the wall clock ('-' for none), so that a
// key can cross to another host whose monotonic clock differs; fence as a
// decimal ('-' for none).
absl::StatusOr<std::string> Key::Serialize() {
  if (!serializable_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ipclock: resource ", QuoteResource(resource_),
        ": this key is tied to the process holding it (its store is not "
        "serializable)"));
  }
  absl::StatusOr<absl::string_view> token = Token();
  if (!token.ok()) return token.status();
  std::string expiry = "-";
  if (expiry_) {
    absl::Time wall_expiry = WallClockNow() + expiry_->Remaining();
    expiry = absl::StrCat(absl::ToUnixMillis(wall_expiry));
  }
  std::string fence = fence_ ? absl::StrCat(*fence_) : "-";
  std::string body = absl::StrCat(kSerialMagic, " ",
                                  absl::Base64Escape(resource_), " ", *token,
                                  " ", expiry, " ", fence);
  std::string sum = ToHex(Sha256(body)).substr(0, kChecksumHexDigits);
  return absl::StrCat(body, " ", sum);
}

absl::StatusOr<Key> Key::Deserialize(absl::string_view text,
                                     const KeyOptions& options) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ' ');
  if (parts.size() != 6) {
    return BadSerial(absl::StrCat("expected 6 space-separated fields, found ",
                                  parts.size()));
  }
  if (parts[0] != kSerialMagic) {
    return BadSerial(absl::StrCat("unknown format tag \"",
                                  absl::CHexEscape(parts[0].substr(0, 32)),
                                  "\" (expected ", kSerialMagic, ")"));
  }
  size_t body_len = text.size() - parts[5].size() - 1;
  std::string sum =
      ToHex(Sha256(text.substr(0, body_len))).substr(0, kChecksumHexDigits);
  if (parts[5] != sum) {
    return BadSerial("checksum mismatch: the text was altered or truncated");
  }
  std::string resource;
  if (!absl::Base64Unescape(parts[1], &resource)) {
    return BadSerial("resource field is not base64");
  }
  if (absl::Status s = ValidateResource(resource, options); !s.ok()) return s;
  std::string raw_token;
  if (parts[2].size() != 44 || !absl::Base64Unescape(parts[2], &raw_token) ||
      raw_token.size() != kTokenBytes) {
    return BadSerial("token field is not base64 of 32 bytes");
  }
  Key key{std::move(resource)};
  key.token_ = std::string(parts[2]);
  if (parts[3] != "-") {
    int64_t millis;
    if (!absl::SimpleAtoi(parts[3], &millis)) {
      return BadSerial("expiry field is not a number");
    }
    absl::Duration left = absl::FromUnixMillis(millis) - WallClockNow();
    key.expiry_ = Deadline::In(left > absl::ZeroDuration() ? left
                                                           : absl::ZeroDuration());
  }
  if (parts[4] != "-") {
    uint64_t fence;
    if (!absl::SimpleAtoi(parts[4], &fence)) {
      return BadSerial("fence field is not a number");
    }
    key.fence_ = fence;
  }
  return key;
}

}  // namespace ipclock
