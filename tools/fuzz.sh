#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang in build-fuzz/ and
# runs each over its seed corpus for a bounded time. Fails on the first
# crash, leak or sanitizer report; the input is then left in
# build-fuzz/crashes/ (<target>-crash-*, -leak-*, -timeout-*), and it belongs
# in tests/fuzz/corpus/<name>/ (the target's name without fuzz_) once the
# bug is fixed.
#
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# The default is 60 s per target, and every target this build has (the
# etcd reply parser only where the etcd store is built). New inputs found during
# a run go to a scratch copy of the corpus, so the seeds in the tree stay
# the reviewed ones.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
# shellcheck source=tools/dev-common.sh
source "$here/tools/dev-common.sh"
seconds="${1:-60}"
shift || true
targets=("$@")

if [ ! -f build-fuzz/build.ninja ]; then
  CC=$(cached clang) CXX=$(cached clang++) meson setup build-fuzz --werror -Dfuzz=true \
    -Dbuildtype=debugoptimized -Db_lundef=false
fi
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(ninja -C build-fuzz -t targets all |
    sed -n 's|^tests/fuzz/\(fuzz_[a-z_]*\):.*|\1|p' | sort -u)
  [ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: build-fuzz has no fuzz targets" >&2; exit 1; }
fi
ninja_progress -C build-fuzz "${targets[@]/#/tests/fuzz/}"

scratch="$(mktemp -d /tmp/ipclock-fuzz-run-XXXXXX)"
mkdir -p build-fuzz/crashes
trap 'rm -rf "$scratch"' EXIT
for t in "${targets[@]}"; do
  printf '\033[1m== fuzzing %s for %s s\033[0m\n' "$t" "$seconds" >&2
  mkdir -p "$scratch/$t"
  # The seeds of fuzz_NAME are in tests/fuzz/corpus/NAME/.
  cp -r "tests/fuzz/corpus/${t#fuzz_}/." "$scratch/$t/" 2>/dev/null || true
  # -rss_limit_mb: ASan's shadow memory counts; the default 2 GB is near
  # what a small CI machine has.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    with_heartbeat "fuzzing $t" "build-fuzz/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=1536 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/crashes/$t-" "$scratch/$t" 2>"$scratch/$t.log" || {
    tail -60 "$scratch/$t.log" >&2
    echo "fuzz.sh: $t failed; the input is in $here/build-fuzz/crashes/" >&2
    exit 1
  }
  grep -E '^stat::number_of_executed_units|^Done' "$scratch/$t.log" >&2 || true
done
echo "fuzz.sh: every target ran ${seconds} s without a crash" >&2
