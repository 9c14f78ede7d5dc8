#!/bin/sh
# Fails on an include that runs back up the library's layers:
#
#   platform <- core <- stores <- registry <- capi
#
# A file in one of these dirs of src/ may include its own layer and those
# to its left, never one to its right. Besides:
#   * platform/ includes nothing of ipclock's: no public header (it has its
#     own deadline type, platform/monotonic_deadline.h);
#   * core/ includes no store's header, public ones (ipclock/stores/) included;
#   * the public headers (include/ipclock/) include only public headers and
#     Abseil: they are installed without src/ and without ipclock_config.h;
#   * the headers an application needs (include/ipclock/*.h) stand without
#     the per-store headers (ipclock/stores/) and the admin ones
#     (ipclock/admin/).
# Only `#include "..."` lines are read: system headers are the platform's.
# One grep reads every file and one awk judges every include, so that the
# check takes well under a second however busy the machine is (a process
# per include took half a minute on a loaded one).
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
cd "$root" || exit 1

files=$(find src/platform src/core src/stores src/registry src/capi include/ipclock \
          -type f | sort)
[ -n "$files" ] || { echo "layering_test: no sources under $root" >&2; exit 1; }
# shellcheck disable=SC2086 # one file name per word: the tree has no spaces
bad=$(grep -H -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files |
  awk '
    BEGIN { rank["platform"] = 0; rank["core"] = 1; rank["stores"] = 2
            rank["registry"] = 3; rank["capi"] = 4 }
    {
      colon = index($0, ":"); file = substr($0, 1, colon - 1)
      line = substr($0, colon + 1)
      sub(/^[^"]*"/, "", line); inc = line; sub(/".*/, "", inc)
      n = split(file, part, "/")
      if (part[1] == "src") {
        if (n != 3) next  # only the files directly in a layer dir
        layer = part[2]; mine = rank[layer]
        top = inc; if (index(top, "/") == 0) top = ""; else sub(/\/.*/, "", top)
        if ((top in rank) && rank[top] > mine)
          print file ": includes " inc ", a layer above " layer
        if (layer == "platform" && inc ~ /^ipclock\//)
          print file ": includes " inc " (platform includes nothing of ipclock'"'"'s)"
        if (layer == "core" && inc ~ /^ipclock\/stores\//)
          print file ": includes " inc " (core includes no store)"
      } else {
        if (file !~ /\.h$/) next
        if (inc !~ /^(ipclock|absl)\//)
          print file ": includes " inc " (public headers include only ipclock/ and absl/ headers)"
        if (n == 3 && inc ~ /^ipclock\/(stores|admin)\//)
          print file ": includes " inc " (the headers an application needs stand without it)"
      }
    }')
if [ -n "$bad" ]; then
  echo "includes that run back up the layers:"
  echo "$bad"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
