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
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"

rank() {
  case "$1" in
    platform) echo 0 ;;
    core) echo 1 ;;
    stores) echo 2 ;;
    registry) echo 3 ;;
    capi) echo 4 ;;
    *) echo -1 ;;
  esac
}

bad=$(
  for layer in platform core stores registry capi; do
    mine=$(rank "$layer")
    for f in "$root/src/$layer"/*; do
      [ -f "$f" ] || continue
      sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
      while read -r inc; do
        top=${inc%%/*}
        [ "$top" = "$inc" ] && top=""
        r=$(rank "$top")
        if [ "$r" -gt "$mine" ]; then
          echo "src/$layer/${f##*/}: includes $inc, a layer above $layer"
        fi
        case "$layer:$inc" in
          platform:ipclock/*)
            echo "src/platform/${f##*/}: includes $inc (platform includes nothing of ipclock's)" ;;
          core:ipclock/stores/*)
            echo "src/core/${f##*/}: includes $inc (core includes no store)" ;;
        esac
      done
    done
  done
  find "$root/include/ipclock" -name '*.h' | sort | while read -r f; do
    rel=${f#"$root/"}
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
    while read -r inc; do
      case "$inc" in
        ipclock/*|absl/*) ;;
        *) echo "$rel: includes $inc (public headers include only ipclock/ and absl/ headers)" ;;
      esac
      case "${rel#include/ipclock/}:$inc" in
        */*) ;;
        *:ipclock/stores/*|*:ipclock/admin/*)
          echo "$rel: includes $inc (the headers an application needs stand without it)" ;;
      esac
    done
  done
)
if [ -n "$bad" ]; then
  echo "includes that run back up the layers:"
  echo "$bad"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
