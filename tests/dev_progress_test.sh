#!/usr/bin/env bash
# tools/dev's progress as a person waiting sees it, with stand-ins for
# ninja, apt-get and meson test:
#   * the build's filter passes each line on as it comes (a filter that
#     holds piped input back, as mawk does, fails: the stand-in ninja
#     waits until its first line has come out before it goes on);
#   * a step silent for longer than the interval gets a line saying so
#     (the build's last step, apt's last status), and the suite a line
#     naming the test still running; so does a build whose lines come
#     often but are not kept (one kept per 2.5% of the build);
#   * ninja's failure is the filter's status;
#   * a step that prints nothing of its own (mmdebstrap, removing a root, a
#     fuzz target) gets a line each interval, and keeps its status.
# The interval is 1 s here (IPCLOCK_PROGRESS_EVERY), 30 s in tools/dev.
# A few seconds in all; no test of it depends on the machine's speed but
# the bounds of 60 s that a stuck filter would run into.
set -uo pipefail

here="${IPCLOCK_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}"
export here
export IPCLOCK_PROGRESS_EVERY=1
work=$(mktemp -d /tmp/ipclock-progress-XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# waits_for FILE TEXT: up to 60 s for a line of FILE to hold TEXT.
waits_for() {
  local i
  for ((i = 0; i < 600; i++)); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# The build: "[1/3] a", then nothing until that line is out, then a
# silence of 2.5 s, "[2/3] b", "[3/3] c", a compiler message, status 3.
cat >"$work/build.sh" <<'EOF'
source "$here/tools/dev-common.sh"
ninja() {
  echo "[1/3] a"
  while [ ! -e "$work/go" ]; do sleep 0.1; done
  sleep 2.5
  echo "[2/3] b"
  echo "[3/3] c"
  echo "x.cc:1: error: stand-in"
  return 3
}
ninja_progress -C nowhere >"$work/build.out"
echo "status $?" >>"$work/build.out"
EOF
work="$work" bash "$work/build.sh" &
if waits_for "$work/build.out" "[1/3] a"; then
  touch "$work/go"
else
  fail "the build's first line did not come out while ninja ran (a buffering filter?)"
  touch "$work/go"
fi
wait
grep -q '^  \.\.\. [0-9]* s since: \[1/3\] a$' "$work/build.out" ||
  fail "no line during the build's silence"
grep -qx '\[3/3\] c' "$work/build.out" || fail "the build's last step is missing"
grep -qx 'x.cc:1: error: stand-in' "$work/build.out" || fail "the compiler's message is missing"
grep -qx 'status 3' "$work/build.out" || fail "ninja's status is not the filter's"
sed 's/^/build: /' "$work/build.out"

# A build whose steps come every 0.2 s for 3 s, but of 4000: the 2.5%
# between two of the lines kept would take 20 s. One comes each interval
# all the same (without that, [1/4000] alone).
bash -c 'source "$here/tools/dev-common.sh"
  ninja() { local i; for ((i = 1; i <= 15; i++)); do echo "[$i/4000] s$i"; sleep 0.2; done; }
  ninja_progress' >"$work/steps.out"
[ "$(grep -c '^\[' "$work/steps.out")" -ge 3 ] ||
  fail "steps that come often but far apart in the build got no line each interval"
sed 's/^/steps: /' "$work/steps.out"

# apt-get's status lines, then a silence of 2.5 s.
{
  echo "Need to get 10 MB of archives."
  echo "pmstatus:foo:20:Unpacking foo"
  sleep 2.5
  echo "pmstatus:foo:100:Installed foo"
} | bash -c 'source "$here/tools/dev-common.sh"; apt_progress' >"$work/apt.out"
grep -q '^  still installing after [0-9]* s (Unpacking foo)$' "$work/apt.out" ||
  fail "no line during apt's silence"
grep -qx '  installing: 100% (Installed foo)' "$work/apt.out" || fail "apt's last tenth is missing"
sed 's/^/apt: /' "$work/apt.out"

# The suite: a stand-in meson whose one test runs 2.5 s.
mkdir "$work/bin"
cat >"$work/bin/meson" <<'EOF'
#!/usr/bin/env bash
sh -c 'sleep 2.5' stand-in-test &
wait
EOF
chmod +x "$work/bin/meson"
PATH="$work/bin:$PATH" bash -c '
  source "$here/tools/dev-common.sh"
  ipc_objects() { :; }
  run_suite nowhere' >"$work/suite.out" 2>&1
grep -q 'into the suite; running: sh -c sleep 2.5;' "$work/suite.out" ||
  fail "no line naming the test that runs"
sed 's/^/suite: /' "$work/suite.out"

# A silent step (mmdebstrap, removing a root, a fuzz target): a line each
# interval while it runs, and its status.
bash -c 'source "$here/tools/dev-common.sh"
  with_heartbeat "a stand-in step" sh -c "sleep 2.5; exit 4"
  echo "status $?"' >"$work/step.out" 2>&1
grep -q '^  \.\.\. [0-9]* s into a stand-in step$' "$work/step.out" ||
  fail "no line during a silent step"
grep -qx 'status 4' "$work/step.out" || fail "the step's status is lost"
sed 's/^/step: /' "$work/step.out"

if [ "$failed" -ne 0 ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
