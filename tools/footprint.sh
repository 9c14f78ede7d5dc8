#!/usr/bin/env bash
# What ipclock weighs in a fully static binary, per architecture.
#
#   tools/footprint.sh [--arch ARCH]... [--out DIR]   (also `tools/dev footprint`)
#
# ARCH: x86_64 (the host), aarch64, armhf; default: x86_64 and aarch64. For each, two
# builds of the local stores (no remote store; io_uring and XXH3 keys
# included), in build-footprint-ARCH-CONFIG/:
#
#   baseline  -O2, static, stripped
#   small     -Os, LTO, --gc-sections (with -ffunction-sections
#             -fdata-sections), NDEBUG, no PIE, no unwind tables (nothing
#             is thrown), stripped
#
# and in each, three programs: the `ipclock` CLI, tools/footprint/minimal.c,
# a C program that takes a lock in a flock and in a shm store, linked from an
# installed copy with `pkg-config --static --libs ipclock` and -static, and
# tools/footprint/minimal_raw.c, the flock lock without ipclock, linked
# alike (the table says how much minimal.c grows over it). Each is run once
# (under qemu-user for ARM) to show it works.
#
# Prints a table, the largest contributors to the small CLI by library, and
# writes DIR/footprint.json (default DIR: the current dir, as tools/bench
# writes bench.json there). The JSON:
#   {"ipclock_version", "compiler", "stores", "configs": {NAME: flags},
#    "sizes": [{"arch", "program", "config", "file_bytes", "text", "data",
#               "bss", "runs"}],
#    "breakdown": [{"arch", "program", "part", "bytes"}]}
# file_bytes is the stripped file; text/data/bss are as size(1) counts them;
# breakdown splits the small build's symbols by where they come from
# (ipclock, abseil, libstdc++, mbedtls, liburing, xxhash, libc and the rest).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
# shellcheck source=tools/dev-common.sh
source "$here/tools/dev-common.sh"

usage() { usage_lines 4 7; }

arches=()
out=.
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || usage; arches+=("$2"); shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out="$2"; shift 2 ;;
    *) echo "tools/dev footprint: unknown argument '$1'" >&2; usage ;;
  esac
done
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 aarch64)
mkdir -p "$out"
out=$(cd "$out" && pwd)

common_opts=(-Dredis=disabled -Dpostgres=disabled -Dmysql=disabled -Dsqlite=disabled
             -Dmemcached=disabled -Dzookeeper=disabled -Detcd=disabled -Dtests=disabled
             -Dbench=disabled -Dphp_interop=disabled -Dcli=enabled -Dprefer_static=true -Ddebug=false)
baseline_cflags=""
baseline_ldflags="-static"
small_cflags="-ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-pie"
small_ldflags="-static -no-pie -Wl,--gc-sections"

apt_install "${build_packages[@]}" python3 liburing-dev libxxhash-dev
results=$(mktemp /tmp/ipclock-footprint-XXXXXX)
trap 'rm -f "$results"' EXIT

for arch in "${arches[@]}"; do
  cross=()
  if [ "$arch" = x86_64 ]; then
    tool_prefix=
    pc_libdir=
  else
    cross_install "$arch"
    cross=(--cross-file "$cross_file")
    tool_prefix="$triplet-"
    pc_libdir="/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig"
  fi
  for config in baseline small; do
    dir="build-footprint-$arch-$config"
    if [ "$config" = baseline ]; then
      opts=(-Doptimization=2 -Db_lto=false -Db_ndebug=false -Db_pie=false)
      cflags=$baseline_cflags ldflags=$baseline_ldflags
    else
      opts=(-Doptimization=s -Db_lto=true -Db_ndebug=true -Db_pie=false)
      cflags=$small_cflags ldflags=$small_ldflags
    fi
    say "building $arch $config ($dir/)"
    # No --werror: link-time optimisation repeats the compiler's analysis
    # at link time, where a new warning says nothing about the sources.
    reconfigure=()
    [ ! -f "$dir/build.ninja" ] || reconfigure=(--reconfigure)
    # Meson's summary goes to a log; its errors (on stdout too) are shown.
    meson setup "${reconfigure[@]}" "$dir" "${cross[@]}" "${common_opts[@]}" "${opts[@]}" \
      -Dc_args="$cflags" -Dcpp_args="$cflags" -Dc_link_args="$ldflags" -Dcpp_link_args="$ldflags" \
      >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log" >&2; exit 1; }
    rm -f "$dir.setup.log"
    ninja_progress -C "$dir"
    rm -rf "$dir/footprint"
    meson install -C "$dir" --no-rebuild --quiet --destdir "$here/$dir/footprint/dest"
    pc=$(find "$dir/footprint/dest" -name ipclock.pc | head -n 1)
    prefix=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix ipclock)
    mkdir -p "$dir/footprint/pc"
    sed "s|^prefix=.*|prefix=$here/$dir/footprint/dest$prefix|" "$pc" >"$dir/footprint/pc/ipclock.pc"
    if [ -n "$pc_libdir" ]; then
      flags=$(PKG_CONFIG_LIBDIR="$pc_libdir" PKG_CONFIG_PATH="$dir/footprint/pc" \
              pkg-config --static --cflags --libs ipclock)
    else
      flags=$(PKG_CONFIG_PATH="$dir/footprint/pc" pkg-config --static --cflags --libs ipclock)
    fi
    optflags="-O2"
    [ "$config" = baseline ] || optflags="-Os -flto -DNDEBUG"
    # Compiled as C, linked by the C++ driver: in a fully static link the
    # C++ runtime (libstdc++.a) must come after Abseil's archives, which
    # pkg-config lists after ipclock's own -lstdc++; g++ adds it last.
    # shellcheck disable=SC2086  # flag lists
    "${tool_prefix}gcc" -std=c11 $optflags $cflags -c -o "$dir/footprint/minimal.o" \
      tools/footprint/minimal.c $(echo " $flags" | grep -o -- ' -[ID][^ ]*' | tr -d '\n')
    # shellcheck disable=SC2086
    "${tool_prefix}g++" $optflags -o "$dir/footprint/minimal" "$dir/footprint/minimal.o" $flags $ldflags
    # The same program without ipclock, linked alike: what ipclock adds to
    # a static program is the difference.
    # shellcheck disable=SC2086
    "${tool_prefix}gcc" -std=c11 $optflags $cflags -o "$dir/footprint/minimal_raw" \
      tools/footprint/minimal_raw.c $ldflags
    cp "$dir/tools/ipclock" "$dir/footprint/ipclock"
    for program in ipclock minimal minimal_raw; do
      bin="$dir/footprint/$program"
      "${tool_prefix}strip" -o "$bin.stripped" "$bin"
      runs=false
      if [ "$program" = ipclock ]; then
        "$bin.stripped" --help >/dev/null 2>&1 && runs=true
      else
        lockdir=$(mktemp -d /tmp/ipclock-footprint-locks-XXXXXX)
        args=("$lockdir")
        [ "$program" = minimal_raw ] || args+=("ipclock-footprint-$$")
        if "$bin.stripped" "${args[@]}" 2>/dev/null; then runs=true; fi
        rm -rf "$lockdir" "/dev/shm/ipclock.ipclock-footprint-$$"
      fi
      read -r text data bss _ < <("${tool_prefix}size" "$bin.stripped" | tail -n 1)
      printf 'size %s %s %s %s %s %s %s %s\n' "$arch" "$program" "$config" \
        "$(stat -c %s "$bin.stripped")" "$text" "$data" "$bss" "$runs" >>"$results"
      if [ "$config" = small ]; then
        "${tool_prefix}nm" --size-sort -S -C "$bin" | awk -v a="$arch" -v p="$program" \
          '{ size = $2; $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); print "sym", a, p, size, $0 }' >>"$results"
      fi
    done
  done
done

python3 - "$results" "$out/footprint.json" "$(gcc -dumpfullversion)" \
  "$(meson introspect build-footprint-"${arches[0]}"-small --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')" \
  "$baseline_cflags $baseline_ldflags" "$small_cflags $small_ldflags" <<'EOF'
import json, re, sys
results, out, gcc_version, version, base_flags, small_flags = sys.argv[1:]
sizes, parts = [], {}
def part(name):
    # Where a symbol comes from, by its (demangled) name.
    if re.search(r'\bipclock\b|^ipclock_', name): return 'ipclock'
    if re.search(r'\babsl\b', name): return 'abseil'
    if name.startswith(('mbedtls_', 'mbedcrypto')): return 'mbedtls'
    if name.startswith(('io_uring', '__io_uring')): return 'liburing'
    if name.startswith(('XXH', 'ZSTD_XXH')): return 'xxhash'
    if re.search(r'\bstd::|__gnu_cxx|__cxa|__cxxabiv1|operator new|operator delete|^typeinfo|^vtable for std|^d_|^__gxx', name): return 'libstdc++'
    return 'libc and the rest'
for line in open(results):
    f = line.rstrip('\n').split(' ', 4 if line.startswith('sym') else 8)
    if f[0] == 'size':
        _, arch, program, config, file_bytes, text, data, bss, runs = f
        sizes.append(dict(arch=arch, program=program, config=config, file_bytes=int(file_bytes),
                          text=int(text), data=int(data), bss=int(bss), runs=runs == 'true'))
    else:
        _, arch, program, size, name = f
        key = (arch, program, part(name))
        parts[key] = parts.get(key, 0) + int(size, 16)
breakdown = [dict(arch=a, program=p, part=k, bytes=b) for (a, p, k), b in sorted(parts.items())]
doc = dict(ipclock_version=version, compiler='gcc ' + gcc_version,
           stores='flock, shm, semaphore, posix-semaphore, in-memory, combined (no redis, no postgres); io_uring, xxh3 keys',
           configs=dict(baseline=base_flags.strip(), small=('-Os -flto -DNDEBUG ' + small_flags).strip()),
           sizes=sizes, breakdown=breakdown)
with open(out, 'w') as f:
    json.dump(doc, f, indent=1)
    f.write('\n')
print('%-8s %-8s %-9s %10s %10s %8s %8s  %s' % ('arch', 'program', 'config', 'file', 'text', 'data', 'bss', 'runs'))
for s in sizes:
    print('%-8s %-8s %-9s %10d %10d %8d %8d  %s' % (s['arch'], s['program'], s['config'], s['file_bytes'],
                                                   s['text'], s['data'], s['bss'], 'yes' if s['runs'] else 'NO'))
for arch in sorted({s['arch'] for s in sizes}):
    for config in ('baseline', 'small'):
        got = {s['program']: s['file_bytes'] for s in sizes if s['arch'] == arch and s['config'] == config}
        if 'minimal' in got and 'minimal_raw' in got:
            print('%-8s %-9s minimal.c grows by %d bytes over minimal_raw.c (the same lock without ipclock)'
                  % (arch, config, got['minimal'] - got['minimal_raw']))
print('\nsymbols of the small build, by origin (bytes):')
for b in breakdown:
    print('%-8s %-8s %-18s %9d' % (b['arch'], b['program'], b['part'], b['bytes']))
print('\nwritten: ' + out)
EOF
