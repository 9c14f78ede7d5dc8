#!/usr/bin/env bash
# Builds the Debian packages from the tree, checks them with lintian,
# installs them, builds programs against the installed libipclock-dev (C
# through pkg-config, C++ through CMake) and runs them, then removes the
# packages again.
#
#   tools/package.sh      (also `tools/dev package`)
#
# The tree is copied to build-package/src (without build dirs or .git), so
# the packages land in build-package/: ipclock_VERSION_ARCH.deb and
# libipclock-dev_VERSION_ARCH.deb. By hand, from a checkout:
# `dpkg-buildpackage -b -us -uc` puts them in the parent dir.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
# shellcheck source=tools/dev-common.sh
source "$here/tools/dev-common.sh"

if [ $# -gt 0 ]; then
  echo "tools/dev package: unknown argument '$1'" >&2
  sed -n '7p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 64
fi

# The package's Build-Depends (first of each alternative, without versions;
# debhelper-compat is debhelper's), build-essential, which dpkg-buildpackage
# requires of every build, and what the checks below run.
mapfile -t build_depends < <(
  sed -n '/^Build-Depends:/,/^[^ \t]/{s/^Build-Depends://;/^[^ \t]/d;p}' debian/control |
    tr ',' '\n' | sed 's/|.*//; s/([^)]*)//; s/\[[^]]*\]//; s/<[^>]*>//' |
    awk 'NF { print ($1 == "debhelper-compat") ? "debhelper" : $1 }')
apt_install --for "build the Debian packages, check them and build programs against them" \
  "${build_depends[@]}" build-essential dpkg-dev lintian cmake man-db

rm -rf build-package
mkdir -p build-package/src
tar -C "$here" --exclude='./build*' --exclude=./.git -cf - . | tar -C build-package/src -xf -

say "dpkg-buildpackage -b -us -uc (build-package/)"
(cd build-package/src && dpkg-buildpackage -b -us -uc)

say "lintian (fails on errors; warnings are listed)"
lintian --fail-on error --display-info build-package/*.changes

# The -dev package's documented use (pkg-config --cflags --libs ipclock)
# needs pkg-config: it must come with the package.
dev_depends=$(dpkg-deb -f build-package/libipclock-dev_*.deb Depends)
case ", $dev_depends," in
  *", pkg-config,"*|*", pkg-config "*) ;;
  *) echo "libipclock-dev does not depend on pkg-config: $dev_depends" >&2; exit 1 ;;
esac

say "installing the packages"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  ./build-package/ipclock_*.deb ./build-package/libipclock-dev_*.deb >/dev/null
remove_packages() {
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ipclock libipclock-dev >/dev/null || true
}
trap remove_packages EXIT

dpkg -L ipclock libipclock-dev | grep -E 'bin/|\.a$|\.pc$|\.cmake$|tmpfiles|man1|examples/'
tmp=$(mktemp -d /tmp/ipclock-package-XXXXXX)
trap 'remove_packages; rm -rf "$tmp"' EXIT

say "a C program through pkg-config, plain and --static"
for static in "" --static; do
  # shellcheck disable=SC2046,SC2086  # pkg-config prints a flag list
  cc -std=c11 -Wall -Werror -o "$tmp/c" tests/capi_pkgconfig/main.c \
    $(pkg-config --cflags --libs $static ipclock)
  "$tmp/c" "flock://$tmp?removeipc=ignore" in-memory
done

say "a C++ program through CMake's find_package(ipclock)"
cmake -S tests/cmake_consumer -B "$tmp/cmake" -DIPCLOCK_CONSUMER_SOURCE="$here/tests/capi_pkgconfig/main.cc"
cmake --build "$tmp/cmake"
"$tmp/cmake/consumer" "flock://$tmp?removeipc=ignore"

say "the example units under /usr/share/doc/ipclock/examples"
for unit in ipclock-job.service ipclock-daemon.service ipclock-single-instance.conf \
    ipclock-metrics.service ipclock-metrics.timer; do
  cmp "/usr/share/doc/ipclock/examples/$unit" "doc/examples/$unit"
done

say "the installed CLI"
/usr/bin/ipclock run --store "flock://$tmp?removeipc=ignore" --key package -- true
man -w ipclock
say "packages built, clean of lintian errors, installed and used"
