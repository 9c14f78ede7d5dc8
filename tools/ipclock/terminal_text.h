// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Text from users and from the system (resource names, paths, DSNs, option
// values, process names, anything in an error message) on its way to a
// terminal. A name may hold any byte: an ESC starts an escape sequence that
// can move the cursor, retitle the window or hide what came before, a BEL
// rings, a CR or newline forges a line of its own. Everything ipclock
// prints goes through Printable() or, for JSON, JsonString().

#ifndef IPCLOCK_TOOLS_IPCLOCK_TERMINAL_TEXT_H_
#define IPCLOCK_TOOLS_IPCLOCK_TERMINAL_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace ipclock_cli {

// The length of the valid UTF-8 sequence at the start of `s` (1 for an
// ASCII byte), or 0 for a byte that starts none.
size_t Utf8SequenceLength(absl::string_view s);

// Whether the UTF-8 sequence `seq` (of Utf8SequenceLength()) is a C1 control
// (U+0080 to U+009F), which some terminals obey as they obey ESC sequences.
bool IsC1Control(absl::string_view seq);

// `text` with every control byte (C0, DEL), C1 control and byte that is not
// valid UTF-8 written as \xHH; all else, UTF-8 letters included, as it is.
std::string Printable(absl::string_view text);

// `text` as Printable() writes it, with each backslash doubled, so that
// \xHH always stands for one byte escaped (a name may be "\x1b" as text).
std::string UnambiguousPrintable(absl::string_view text);

// UnambiguousPrintable() between double quotes, with `"` written as \",
// so that the quotes are the name's bounds.
std::string QuotedPrintable(absl::string_view text);

// The columns a Printable() text takes on a terminal: one per UTF-8
// character. (East Asian wide characters take two, and are counted as
// one: a table with them is a little out of line, never broken.)
size_t DisplayWidth(absl::string_view printable);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_TERMINAL_TEXT_H_
