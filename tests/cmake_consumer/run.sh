#!/bin/sh
# Installs the build into a temp dir, then configures, builds and runs the
# CMake project beside this script against it: find_package(ipclock) finds
# the staged ipclockConfig.cmake through CMAKE_PREFIX_PATH, and the program
# (tests/capi_pkgconfig/main.cc) takes and releases a flock lock. Then the
# project in versions/ checks which version requests the package meets.
#
# Environment: IPCLOCK_BUILD_ROOT, IPCLOCK_SOURCE_ROOT (set by meson test),
# CXX (the C++ compiler command), SANITIZE (b_sanitize of the build).
set -eu

if [ -n "${IPCLOCK_CROSS:-}" ]; then
  echo "skipped in a cross build ($IPCLOCK_CROSS): the CMake consumer is built natively"
  exit 77
fi

build=${IPCLOCK_BUILD_ROOT:?}
src=${IPCLOCK_SOURCE_ROOT:?}
command -v cmake >/dev/null || { echo "cmake is not installed: skipped"; exit 77; }
tmp=$(mktemp -d /tmp/ipclock-cmake-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

. "$src/tests/stage_install.sh"
stage_install "$build" "$tmp/dest"
config=$(staged_file "$tmp/dest" ipclockConfig.cmake)
prefix=$(meson introspect "$build" --buildoptions |
         python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')

flags=
[ "${SANITIZE:-none}" = none ] || flags="-fsanitize=$SANITIZE"
# UBSan's vptr check needs RTTI, which libipclock.a is built without.
case "${SANITIZE:-none}" in *undefined*) flags="$flags -fno-sanitize=vptr" ;; esac
# The compiler is the build's (its first word; a launcher such as ccache
# would be the rest).
cxx=$(echo "${CXX:-c++}" | awk '{print $NF}')
cmake -S "$src/tests/cmake_consumer" -B "$tmp/build" \
      -DCMAKE_PREFIX_PATH="$tmp/dest$prefix" \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$flags" \
      -DIPCLOCK_CONSUMER_SOURCE="$src/tests/capi_pkgconfig/main.cc"
cmake --build "$tmp/build" --verbose
version=$(meson introspect "$build" --projectinfo |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
cmake -S "$src/tests/cmake_consumer/versions" -B "$tmp/versions" \
      -DCMAKE_PREFIX_PATH="$tmp/dest$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
      -DIPCLOCK_VERSION="$version" >"$tmp/versions.log" 2>&1 || {
  cat "$tmp/versions.log" >&2
  exit 1
}
echo "find_package(ipclock VERSION) answers as ipclockConfigVersion.cmake says"
mkdir "$tmp/locks"
"$tmp/build/consumer" "flock://$tmp/locks?removeipc=ignore"
