// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// How a combined store (combined_store.cc) counts its members against its
// strategy: whether the members that took, kept or released a lock meet
// it, and CheckHeld()'s verdict from the members' answers so far.

#ifndef IPCLOCK_STORES_COMBINED_VERDICT_H_
#define IPCLOCK_STORES_COMBINED_VERDICT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/key.h"
#include "ipclock/store.h"
#include "ipclock/stores/combined_store.h"

namespace ipclock {

// A strategy over a combined store's `members` members.
class CombineCount {
 public:
  CombineCount(CombineStrategy strategy, size_t members)
      : strategy_(strategy), members_(members) {}

  absl::string_view StrategyName() const {
    return strategy_ == CombineStrategy::kConsensus ? "consensus" : "unanimous";
  }

  bool IsMet(size_t successes) const {
    if (strategy_ == CombineStrategy::kUnanimous) {
      return successes == members_;
    }
    return 2 * successes > members_;
  }

  bool CanBeMet(size_t failures) const { return IsMet(members_ - failures); }

 private:
  const CombineStrategy strategy_;
  const size_t members_;
};

// What a member said in one CheckHeld(): kNone for a member the key did
// not take; kUnasked before it is asked, kPending while it is.
enum class MemberAnswer : uint8_t { kNone, kUnasked, kPending, kHeld, kLost, kUnknown };

// Records what member `i` said, `s`, in `answers` and `why` (by member index).
void RecordAnswer(size_t i, const absl::Status& s, std::vector<MemberAnswer>* answers,
                  std::vector<std::string>* why);

// CheckHeld()'s verdict from the answers so far, or nullopt while the
// members not heard yet could still decide it. `describe` names the
// combined store in the error.
std::optional<absl::Status> CheckVerdict(const CombineCount& count,
                                         const std::vector<std::shared_ptr<Store>>& members,
                                         absl::string_view describe, const Key& key,
                                         const std::vector<MemberAnswer>& answers,
                                         const std::vector<std::string>& why);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_COMBINED_VERDICT_H_
