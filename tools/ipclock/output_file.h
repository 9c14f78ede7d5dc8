// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list --output FILE`: a file replaced whole, as node_exporter's
// textfile collector (and any reader that opens it at any moment) expects.

#ifndef IPCLOCK_TOOLS_IPCLOCK_OUTPUT_FILE_H_
#define IPCLOCK_TOOLS_IPCLOCK_OUTPUT_FILE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ipclock_cli {

// Puts `text` at `path`: written to a new file beside it (".NAME.XXXXXX",
// which the collector's *.prom glob does not match), synced, then renamed
// over it, and the directory synced; a reader sees the old file or the
// new one, never a part, and a crash leaves one of them. The new file
// takes the old one's mode, or 0644 where there was none (the collector
// runs as another user). The OS error, naming the file, otherwise; the
// temporary file is removed then.
absl::Status ReplaceFile(const std::string& path, absl::string_view text);

// What `path` holds now (at most 64 MiB); nullopt if there is no file.
// The OS error otherwise.
absl::StatusOr<std::optional<std::string>> ReadFileIfAny(const std::string& path);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_OUTPUT_FILE_H_
