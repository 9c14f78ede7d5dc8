// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Placeholders in a torture DSN for things that must not outlive the run:
// "{tmpdir}" becomes a fresh dir under /tmp and "{shm}" a fresh shm store
// segment name. The destructor removes both, so a run leaves nothing behind
// whatever its outcome.

#ifndef IPCLOCK_TOOLS_TORTURE_SCRATCH_H_
#define IPCLOCK_TOOLS_TORTURE_SCRATCH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ipclock_torture {

class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();

  // `dsn` with its placeholders replaced. Internal if a dir cannot be made.
  absl::StatusOr<std::string> Expand(absl::string_view dsn);

 private:
  std::string tmpdir_;
  std::string shm_name_;
};

}  // namespace ipclock_torture

#endif  // IPCLOCK_TOOLS_TORTURE_SCRATCH_H_
