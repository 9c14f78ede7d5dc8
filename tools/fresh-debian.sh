#!/usr/bin/env bash
# Runs a tools/dev command as a new user would on a fresh Debian 12: in a
# minimal root made for this run alone (mmdebstrap --variant=minbase
# bookworm), from a clean clone of one commit of this checkout, made there
# as the README says (apt-get install git ca-certificates, git clone), as
# root in a chroot. CI runs the README's first command this way (.ci/run): CI's own
# machine has everything installed already, so there a command that forgets
# to install what it uses would still pass.
#
#   tools/fresh-debian.sh [--rev REV] [--debs DIR] [--in-memory | --keep]
#                         COMMAND [ARGS...]
#       (also `tools/dev fresh ...`), e.g. `tools/dev fresh demo`,
#       `tools/dev fresh test --quick`, `tools/dev fresh package`
#
#   --rev REV   the commit to clone (HEAD by default: changes that are not
#               committed are not in the clone)
#   --debs DIR  keep the .debs that the command downloads in DIR (the
#               root's apt cache, /var/cache/apt/archives, is DIR), and
#               take them from there the next time: every package is still
#               installed anew, only the download is saved (apt checks each
#               .deb against the archive's index, as it does its own cache)
#   --in-memory make the root in a tmpfs of its own, gone when the run
#               ends: nothing is written to disk or removed from it
#               afterwards (the demo's root takes about 1 GiB of memory)
#   --keep      leave the root in place afterwards (its path is printed)
#
# The chroot has what a minimal container has: mount and PID namespaces of
# its own, /proc, a read-only /sys, its own /dev/pts and a 64 MiB tmpfs on
# /dev/shm, the host's network, no init and no systemd. Its / is not a mount
# point, as in any chroot. IPCLOCK_TEST_PORT_BASE and CI are passed in, so
# that test servers started inside listen where the caller expects.
#
# Needs root (mmdebstrap, chroot, mounts); installs mmdebstrap and git when
# they are missing. Exits with the command's status.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
# shellcheck source=tools/dev-common.sh
source "$here/tools/dev-common.sh"

usage() { usage_lines 10 25; }

args=("$@")
rev=HEAD
debs=""
keep=0
in_memory=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rev) [ $# -ge 2 ] || usage; rev="$2"; shift 2 ;;
    --debs) [ $# -ge 2 ] || usage; debs="$2"; shift 2 ;;
    --in-memory) in_memory=1; shift ;;
    --keep) keep=1; shift ;;
    --) shift; break ;;
    -*) echo "tools/dev fresh: unknown option '$1'" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || usage
if [ "$in_memory" -eq 1 ] && [ "$keep" -eq 1 ]; then
  echo "tools/dev fresh: --in-memory and --keep exclude each other" >&2
  usage
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "tools/dev fresh: needs root (it makes a root with mmdebstrap, mounts and chroots)" >&2
  exit 77
fi
# --in-memory: the whole run in a mount namespace of its own, so that its
# tmpfs is never seen by the host and goes with the last process.
if [ "$in_memory" -eq 1 ] && [ -z "${IPCLOCK_FRESH_NAMESPACE:-}" ]; then
  exec unshare --mount --propagation private -- \
    env IPCLOCK_FRESH_NAMESPACE=1 "${BASH_SOURCE[0]}" "${args[@]}"
fi

apt_install --for "make a fresh Debian root and clone into it" mmdebstrap git
if ! commit="$(git -C "$here" rev-parse --verify --quiet "$rev^{commit}")"; then
  echo "tools/dev fresh: '$rev' names no commit of this checkout" >&2
  exit 64
fi

work="$(mktemp -d /tmp/ipclock-fresh-XXXXXX)"
# The root is a dir in it, so that (as in any chroot) it is no mount point.
[ "$in_memory" -eq 0 ] || mount -t tmpfs -o mode=0700 ipclock-fresh "$work"
root="$work/root"
remove_root() {
  # The mounts lived in the chroot's own mount namespace, gone with it;
  # --one-file-system would still stop at one that was not.
  if [ "$in_memory" -eq 1 ]; then
    umount "$work" && rmdir "$work"
  elif [ "$keep" -eq 1 ]; then
    echo "tools/dev fresh: the root is kept in $root" >&2
  else
    local start=$SECONDS
    with_heartbeat "removing the root" rm -rf --one-file-system "$work"
    echo "tools/dev fresh: root removed in $((SECONDS - start)) s" >&2
  fi
}
cleanup_cmds+=(remove_root)

if [ -n "$debs" ]; then
  mkdir -p "$debs"
  debs="$(cd "$debs" && pwd)"
fi
t0=$SECONDS
say "making a minimal Debian 12 root (mmdebstrap --variant=minbase bookworm, in $root)"
with_heartbeat "making the root" mmdebstrap --quiet --variant=minbase bookworm "$root"
# The clone is made in the root as the README's first lines make one: git
# and ca-certificates installed by apt-get there (a minimal root has
# neither), then `git clone`, here of a bare copy of this checkout.
say "making a bare copy of $commit for the root to clone"
with_heartbeat "copying the commit" git clone --quiet --bare --no-local "$here" "$root/var/tmp/ipclock.git"
echo "tools/dev fresh: root ready after $((SECONDS - t0)) s" >&2

env_in=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
        TERM="${TERM:-dumb}")
for v in IPCLOCK_TEST_PORT_BASE CI; do
  [ -z "${!v:-}" ] || env_in+=("$v=${!v}")
done

t0=$SECONDS
say "in the fresh root, as root: tools/dev $*"
status=0
# The outer bash stays PID 1 of the namespace (it reaps whatever the test
# servers leave to init); when it exits, the kernel ends every process left
# in the namespace and drops its mounts.
unshare --mount --pid --fork --propagation private -- bash -c '
  set -e
  root="$1" debs="$2" commit="$3" n="$4"
  shift 4
  env_in=("${@:1:n}")
  shift "$n"
  mount -t proc proc "$root/proc"
  mount -t sysfs -o ro sysfs "$root/sys"
  mount -t tmpfs -o nosuid,nodev,mode=1777,size=64m shm "$root/dev/shm"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
  mount --bind "$root/dev/pts/ptmx" "$root/dev/ptmx"
  [ -z "$debs" ] || mount --bind "$debs" "$root/var/cache/apt/archives"
  chroot "$root" /usr/bin/env -i "${env_in[@]}" DEBIAN_FRONTEND=noninteractive /bin/bash -c "
    set -e
    echo \"== as the README says: apt-get install git ca-certificates; git clone\" >&2
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends git ca-certificates >/tmp/readme-apt.log 2>&1 ||
      { cat /tmp/readme-apt.log >&2; exit 1; }
    cd /root
    git clone --quiet --no-checkout /var/tmp/ipclock.git ipclock
    git -C ipclock checkout --quiet --detach $commit
    rm -rf /var/tmp/ipclock.git
    cd ipclock
    exec tools/dev \"\$@\"" tools/dev "$@"
  exit  # not the last command, so that bash does not exec it as PID 1
' fresh "$root" "$debs" "$commit" "${#env_in[@]}" "${env_in[@]}" "$@" || status=$?
echo "tools/dev fresh: 'tools/dev $*' ended with status $status after $((SECONDS - t0)) s" >&2
exit "$status"
