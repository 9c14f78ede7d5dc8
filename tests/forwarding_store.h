// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A store that passes the required calls on to a real store, for tests
// that inject a fault into (or count) one of them by overriding it. Only
// what every store must have is passed on; the optional calls
// (Extend, CheckHeld, GetWatchTargets, ...) keep Store's defaults
// unless a test overrides them, so a test says what its store adds.

#ifndef IPCLOCK_TESTS_FORWARDING_STORE_H_
#define IPCLOCK_TESTS_FORWARDING_STORE_H_

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/store_interface.h"

namespace ipclock_test {

class ForwardingStore : public ipclock::StoreWithState<ipclock::KeyState> {
 public:
  // `name` must outlive the store (a literal).
  ForwardingStore(absl::string_view name, std::shared_ptr<ipclock::Store> inner)
      : name_(name), inner_(std::move(inner)) {}
  absl::string_view name() const override { return name_; }
  ipclock::Capabilities capabilities() const override { return inner_->capabilities(); }
  absl::StatusOr<bool> Acquire(ipclock::Key& key, ipclock::LockMode mode,
                            ipclock::Deadline d) override {
    return ipclock::StoreCalls::Acquire(*inner_, key, mode, d);
  }
  absl::Status Release(ipclock::Key& key) override {
    return ipclock::StoreCalls::Release(*inner_, key);
  }
  absl::StatusOr<bool> IsHeld(ipclock::Key& key) override {
    return ipclock::StoreCalls::IsHeld(*inner_, key);
  }

 protected:
  ipclock::Store& inner() const { return *inner_; }

 private:
  const absl::string_view name_;
  const std::shared_ptr<ipclock::Store> inner_;
};

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_FORWARDING_STORE_H_
