#!/bin/sh
# Makes DIR an include dir that shows a layer only what it may include:
# a symbolic link for each FOLDER of src/ named, nothing else. A file of
# core/ compiled with core's view finds "core/x.h" and "platform/x.h" and
# cannot find "stores/..." or "registry/...": an include that runs back up
# the layers (tests/layering_test.sh has the rules) fails to compile.
#
#   include_view.sh SRC DIR FOLDER...     e.g. ... views/core platform core
set -eu
src=$1
dir=$2
shift 2
rm -rf "$dir"
mkdir -p "$dir"
for folder in "$@"; do
  mkdir -p "$dir/$(dirname "$folder")"
  ln -s "$src/$folder" "$dir/$folder"
done
