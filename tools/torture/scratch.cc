// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "torture/scratch.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ipclock/stores/shm_store.h"

namespace ipclock_torture {

namespace {

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  if (remove(path) != 0) fprintf(stderr, "torture: remove %s: %s\n", path, strerror(errno));
  return 0;
}

}  // namespace

absl::StatusOr<std::string> Scratch::Expand(absl::string_view dsn) {
  std::string out(dsn);
  if (out.find("{tmpdir}") != std::string::npos) {
    char tmpl[] = "/tmp/ipclock-torture-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return absl::InternalError(absl::StrCat("torture: mkdtemp: ", strerror(errno)));
    }
    tmpdir_ = tmpl;
    out = absl::StrReplaceAll(out, {{"{tmpdir}", tmpdir_}});
  }
  if (out.find("{shm}") != std::string::npos) {
    shm_name_ = absl::StrCat("torture-", getpid());
    out = absl::StrReplaceAll(out, {{"{shm}", shm_name_}});
  }
  return out;
}

Scratch::~Scratch() {
  if (!tmpdir_.empty()) {
    nftw(tmpdir_.c_str(), RemoveEntry, 8, FTW_DEPTH | FTW_PHYS);
  }
  if (!shm_name_.empty()) {
    ipclock::RemoveShmSegment(shm_name_).IgnoreError();  // NotFound is fine
  }
}

}  // namespace ipclock_torture
