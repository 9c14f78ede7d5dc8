#!/bin/sh
# Fails on an include that runs back up the library's layers:
#
#   platform <- core <- stores <- registry <- capi
#
# A file anywhere under one of these dirs of src/ may include its own layer
# and those to its left, never one to its right. Besides:
#   * platform/ includes nothing of ipclock's: no public header (it has its
#     own deadline type, platform/monotonic_deadline.h);
#   * core/ includes no store's header, public ones (ipclock/stores/) included;
#   * src/stores/ has a folder per store kind and one per mechanism that
#     stores share (ticket_queue, holder_note, connections,
#     semaphore_common): a file is in one of them, includes stores/ headers
#     by their folder, and a store includes its own folder and the shared
#     ones, never another store's; a shared folder includes no store's;
#   * the public headers (include/ipclock/) include only public headers and
#     Abseil: they are installed without src/ and without ipclock_config.h;
#   * the headers an application needs (include/ipclock/*.h) stand without
#     the per-store headers (ipclock/stores/) and the admin ones
#     (ipclock/admin/);
#   * no public header outside ipclock/spi/ includes the store SPI, so that
#     a program that takes locks never compiles what only a store writer
#     needs;
#   * the tools see what their users see: the CLI and the footprint program
#     only the public headers (and their own files); the torture tool also
#     platform/ (pids and their start times), the bench also core/ (it
#     parses DSNs to time each client library's bare connect).
#
# The build refuses most of these on its own: each layer of src/, each
# store's folder and each tool is compiled with a view of the folders it
# may include (src/include_view.sh; tests/include_view_test.py). This check
# also covers what a view cannot: the public headers (include/ is on every
# layer's path but platform's), files the build leaves out of this build,
# and the forms below.
#
# An include is judged by the layer it names, so every way of naming one
# counts: `<stores/x.h>` as much as `"stores/x.h"`. A quoted include is
# looked for first beside the file, so `"../core/x.h"` or `"./x.h"` would
# compile and hide the layer: those forms, and `"src/..."`, are refused
# outright (ipclock's own headers are named from their layer, in quotes).
# System headers (`<x.h>`, `<sys/x.h>`, `<absl/...>`) are the platform's.
#
# One grep reads every file and one awk judges every include, so that the
# check takes well under a second however busy the machine is (a process
# per include took half a minute on a loaded one).
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
cd "$root" || exit 1

files=$(find src include/ipclock tools -type f \
          \( -name '*.h' -o -name '*.c' -o -name '*.cc' -o -name '*.in' \) | sort)
[ -n "$files" ] || { echo "layering_test: no sources under $root" >&2; exit 1; }
# shellcheck disable=SC2086 # one file name per word: the tree has no spaces
bad=$(grep -H -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' $files |
  awk '
    BEGIN { rank["platform"] = 0; rank["core"] = 1; rank["stores"] = 2
            rank["registry"] = 3; rank["capi"] = 4
            # What each tool may include of the library besides ipclock/.
            tool_may["ipclock"] = ""; tool_may["footprint"] = ""
            tool_may["torture"] = " platform "; tool_may["bench"] = " core platform "
            shared = " ticket_queue holder_note connections semaphore_common " }
    {
      colon = index($0, ":"); file = substr($0, 1, colon - 1)
      line = substr($0, colon + 1)
      sub(/^[^<"]*/, "", line); quoted = (substr(line, 1, 1) == "\"")
      inc = substr(line, 2); sub(/[>"].*/, "", inc)
      top = inc; if (index(top, "/") == 0) top = ""; else sub(/\/.*/, "", top)
      n = split(file, part, "/")

      if (inc ~ /^(\.\.?|src|include)\// || inc ~ /\/\.\.\//) {
        print file ": includes " inc " (name a header from its layer, not by a path around it)"
        next
      }
      if (!quoted && (top in rank)) {
        print file ": includes <" inc "> (ipclock'"'"'s own headers are included in quotes)"
        next
      }
      if (part[1] == "src") {
        layer = part[2]
        if (!(layer in rank)) { print file ": is in no layer of src/"; next }
        mine = rank[layer]
        if ((top in rank) && rank[top] > mine)
          print file ": includes " inc ", a layer above " layer
        if (layer == "platform" && top == "ipclock")
          print file ": includes " inc " (platform includes nothing of ipclock'"'"'s)"
        if (layer == "core" && inc ~ /^ipclock\/stores\//)
          print file ": includes " inc " (core includes no store)"
        if (layer == "stores" && n < 4)
          print file ": is in no folder of src/stores/ (one per store kind or shared mechanism)"
        if (top == "stores") {
          folder = inc; sub(/^stores\//, "", folder)
          if (index(folder, "/") == 0) {
            print file ": includes " inc " (a store header is named by its folder, stores/KIND/x.h)"
          } else {
            sub(/\/.*/, "", folder)
            if (layer == "stores" && n >= 4 && folder != part[3] &&
                index(shared, " " folder " ") == 0)
              print file ": includes " inc " (a store includes its own folder and the shared ones, never another store" "'"'"'s)"
          }
        }
      } else if (part[1] == "include") {
        if (file !~ /\.h$/) next
        if (top != "ipclock" && top != "absl" && quoted)
          print file ": includes " inc " (public headers include only ipclock/ and absl/ headers)"
        if (n == 3 && inc ~ /^ipclock\/(stores|admin)\//)
          print file ": includes " inc " (the headers an application needs stand without it)"
        if (part[3] != "spi" && inc ~ /^ipclock\/spi\//)
          print file ": includes " inc " (no header of the API includes the store SPI)"
      } else if (part[1] == "tools") {
        tool = part[2]
        if (!(tool in tool_may)) next  # scripts and test servers: no C++
        if ((top in rank) && index(tool_may[tool], " " top " ") == 0) {
          also = tool_may[tool]; gsub(/^ | $/, "", also)
          print file ": includes " inc " (tools/" tool " sees only the public headers" \
                (also == "" ? "" : " and " also) ")"
        }
      }
    }')
if [ -n "$bad" ]; then
  echo "includes that run back up the layers:"
  echo "$bad"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
