// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "terminal_text.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace ipclock_cli {

size_t Utf8SequenceLength(absl::string_view s) {
  if (s.empty()) return 0;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  size_t n;
  uint32_t min;
  if (b0 < 0x80) return 1;
  if ((b0 & 0xe0) == 0xc0) {
    n = 2;
    min = 0x80;
  } else if ((b0 & 0xf0) == 0xe0) {
    n = 3;
    min = 0x800;
  } else if ((b0 & 0xf8) == 0xf0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  uint32_t cp = b0 & (0x7f >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3f);
  }
  // Overlong forms, surrogates and code points past Unicode are invalid.
  if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return n;
}

bool IsC1Control(absl::string_view seq) {
  // U+0080..U+009F encode as C2 80..C2 9F.
  return seq.size() == 2 && static_cast<unsigned char>(seq[0]) == 0xc2 &&
         static_cast<unsigned char>(seq[1]) <= 0x9f;
}

std::string Printable(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t n = Utf8SequenceLength(text);
    const unsigned char c = static_cast<unsigned char>(text[0]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
      text.remove_prefix(1);
      continue;
    }
    if (IsC1Control(text.substr(0, n))) {
      for (size_t i = 0; i < n; ++i) {
        absl::StrAppend(&out, "\\x", absl::Hex(static_cast<unsigned char>(text[i]),
                                               absl::kZeroPad2));
      }
    } else {
      out.append(text.data(), n);
    }
    text.remove_prefix(n);
  }
  return out;
}

namespace {

// `text` with a backslash before each of `special`'s bytes, then Printable.
std::string PrintableEscaping(absl::string_view text, absl::string_view special) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    if (special.find(c) != absl::string_view::npos) escaped += '\\';
    escaped += c;
  }
  return Printable(escaped);
}

}  // namespace

std::string UnambiguousPrintable(absl::string_view text) {
  return PrintableEscaping(text, "\\");
}

std::string QuotedPrintable(absl::string_view text) {
  return absl::StrCat("\"", PrintableEscaping(text, "\\\""), "\"");
}

size_t DisplayWidth(absl::string_view printable) {
  size_t width = 0;
  while (!printable.empty()) {
    const size_t n = Utf8SequenceLength(printable);
    printable.remove_prefix(n == 0 ? 1 : n);
    ++width;
  }
  return width;
}

}  // namespace ipclock_cli
