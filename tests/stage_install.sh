# shellcheck shell=sh
# Sourced by the tests that build programs against an installed ipclock
# (capi_pkgconfig/run.sh, cmake_consumer/run.sh): installing the build into
# a staging dir, and finding what it installed there.

# stage_install BUILD DEST: installs BUILD under DEST (meson's --destdir);
# its output is shown only if it fails, and then the script exits 1.
stage_install() {
  meson install -C "$1" --no-rebuild --quiet --destdir "$2" >"$2.log" 2>&1 || {
    cat "$2.log" >&2
    exit 1
  }
}

# staged_file DEST NAME: prints the path of the file NAME installed under
# DEST; exits 1, saying so, if none was.
staged_file() {
  staged=$(find "$1" -name "$2" | head -n 1)
  [ -n "$staged" ] || { echo "no $2 was installed" >&2; exit 1; }
  echo "$staged"
}
