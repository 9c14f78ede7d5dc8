// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/combined/combined_verdict.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/store_errors.h"
#include "platform/errors.h"

namespace ipclock {

void RecordAnswer(size_t i, const absl::Status& s, std::vector<MemberAnswer>* answers,
                  std::vector<std::string>* why) {
  (*answers)[i] = s.ok()                ? MemberAnswer::kHeld
                  : absl::IsAborted(s) ? MemberAnswer::kLost
                                       : MemberAnswer::kUnknown;
  (*why)[i] = std::string(s.message());
}

std::optional<absl::Status> CheckVerdict(const CombineCount& count,
                                         const std::vector<std::shared_ptr<Store>>& members,
                                         absl::string_view describe, const Key& key,
                                         const std::vector<MemberAnswer>& answers,
                                         const std::vector<std::string>& why) {
  size_t held = 0;
  size_t unknown = 0;
  std::vector<std::string> lost;
  std::vector<std::string> unasked;
  std::vector<std::string> pending;
  std::vector<std::string> unasked_yet;
  for (size_t i = 0; i < members.size(); ++i) {
    switch (answers[i]) {
      case MemberAnswer::kNone: break;
      case MemberAnswer::kUnasked: unasked_yet.push_back(members[i]->Describe()); break;
      case MemberAnswer::kPending: pending.push_back(members[i]->Describe()); break;
      case MemberAnswer::kHeld: ++held; break;
      case MemberAnswer::kLost: lost.push_back(why[i]); break;
      case MemberAnswer::kUnknown:
        ++unknown;
        unasked.push_back(why[i]);
        break;
    }
  }
  // Every member not heard from may still hold: the lock is lost only if
  // even that would not meet the strategy.
  const size_t unheard = pending.size() + unasked_yet.size();
  const bool lost_anyway = !count.IsMet(held + unknown + unheard);
  if (!lost_anyway && unheard > 0) return std::nullopt;
  if (count.IsMet(held)) return absl::OkStatus();
  // Decided before every member answered: the count is of those that did.
  std::string detail = absl::StrCat(held, " of ", members.size(), " members ",
                                    unheard > 0 ? "are known to hold it" : "hold it");
  if (!lost.empty()) absl::StrAppend(&detail, "; lost: ", absl::StrJoin(lost, "; "));
  if (!unasked.empty()) {
    absl::StrAppend(&detail, "; could not be asked: ", absl::StrJoin(unasked, "; "));
  }
  if (!pending.empty()) {
    absl::StrAppend(&detail, "; no answer yet from: ", absl::StrJoin(pending, ", "));
  }
  if (!unasked_yet.empty()) {
    absl::StrAppend(&detail, "; not asked: ", absl::StrJoin(unasked_yet, ", "));
  }
  if (!lost_anyway) {
    return TransientError(describe, key.resource(),
                          absl::StrCat("cannot tell whether the ", count.StrategyName(),
                                       " of members still holds the lock: ", detail));
  }
  return LostError(describe, key.resource(),
                   absl::StrCat("the lock is no longer held: the ", count.StrategyName(),
                                " of members is no longer met (", detail, ")"));
}

}  // namespace ipclock
