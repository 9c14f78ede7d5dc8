#!/bin/sh
# Fails when an object of libipclock.a outside src/platform/ imports an
# operating-system call (a file, socket, process, clock, sleep, timer,
# signal, thread or IPC call of libc), or reads a clock, sleeps or waits
# with a timeout through C++ (Abseil's or the standard library's), that
# tests/os_seam_allowlist.txt does not list for it; and when an object of
# the ipclock command (tools/ipclock/) but its time_calls.cc reads a clock,
# sleeps or waits with a timeout.
#
# src/platform/ is where the library meets the kernel: a new call belongs
# there, behind a function that says what it is for and keeps its caveats
# (EINTR, errno, fork, which clock) in one place. A clock or a sleep
# reached through C++ is an OS call too: absl::Now(), absl::SleepFor(),
# std::chrono's clocks, std::this_thread's sleeps, and every timed wait of
# absl::Mutex, absl::CondVar, absl::Notification or std::condition_variable
# (whose inline code reads steady_clock and calls pthread_cond_clockwait()
# in the caller's object). The allowlist is what still bypasses the seam;
# it may only shrink. To remove an entry, route the call through
# src/platform/ and delete its line; this test then fails if the call comes
# back.
#
# The command includes only the public headers, so it cannot use
# src/platform/: it makes its clock reads, sleeps and timed waits in
# tools/ipclock/time_calls.cc, and its other objects are checked for those
# calls only. Its other direct OS calls are not: 60 (object, call) pairs
# (signals, fork, exec and waitpid, poll, files, sd_notify's socket, the
# scheduler calls of priority lending), where the library has none.
#
# Usage: os_seam_test.sh LIBIPCLOCK.A [CLI_OBJECTS.A], the second an
# archive of the command's objects (tests/meson.build makes it). Exit 77
# (skipped) where nm cannot read the objects (an LTO build's objects hold
# no machine code).
lib="$1"
case "$lib" in /*) ;; *) lib="$PWD/$lib" ;; esac
cli="${2:-}"
case "$cli" in /*|"") ;; *) cli="$PWD/$cli" ;; esac
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
allow="$root/tests/os_seam_allowlist.txt"
nm_tool="${NM:-nm}"

# The calls the seam covers. Memory and string functions, math, and the
# mutex, condition and once calls that the C++ runtime's own headers make
# inline (std::mutex, std::condition_variable) are not OS calls here.
os_calls='^(open|open64|openat|openat64|close|read|write|pread|pread64|pwrite|pwrite64|readv|writev'
os_calls="$os_calls|fstat|fstat64|stat|stat64|lstat|lstat64|fstatat|fstatat64|statfs|statfs64|fstatfs|fstatfs64|statx"
os_calls="$os_calls|flock|fcntl|fcntl64|ioctl|mmap|mmap64|munmap|mprotect|madvise|ftruncate|ftruncate64|fallocate|fsync|fdatasync"
os_calls="$os_calls|unlink|unlinkat|rename|renameat|renameat2|mkdir|mkdirat|rmdir|link|linkat|symlink|symlinkat|readlink|readlinkat|chmod|fchmod|fchmodat|chown|fchown|fchownat|access|faccessat|opendir|fdopendir|readdir|readdir64|closedir|realpath|getcwd"
os_calls="$os_calls|socket|socketpair|connect|bind|listen|accept|accept4|send|sendto|sendmsg|recv|recvfrom|recvmsg|shutdown|setsockopt|getsockopt|getaddrinfo|freeaddrinfo"
os_calls="$os_calls|poll|ppoll|select|pselect|epoll_create1|epoll_ctl|epoll_wait|epoll_pwait|eventfd|inotify_init1|inotify_add_watch|inotify_rm_watch|pipe|pipe2|dup|dup2|dup3"
os_calls="$os_calls|fork|vfork|execv|execve|execvp|execvpe|posix_spawn|posix_spawnp|kill|waitpid|waitid|_exit|getpid|getppid|gettid|getuid|geteuid|getgid|getegid|setsid|setpgid|prctl|syscall"
os_calls="$os_calls|clock_gettime|gettimeofday|time|nanosleep|clock_nanosleep|usleep|sleep|getrandom"
os_calls="$os_calls|sigaction|sigprocmask|pthread_sigmask|sigfillset|sigemptyset|sigaddset|signalfd|raise"
os_calls="$os_calls|pthread_create|pthread_join|pthread_detach|pthread_atfork|pthread_kill|pthread_setname_np|pthread_attr_init|pthread_attr_destroy|pthread_attr_setstacksize"
os_calls="$os_calls|pthread_mutexattr_init|pthread_mutexattr_destroy|pthread_mutexattr_setrobust|pthread_mutexattr_setpshared|pthread_mutexattr_setprotocol|pthread_mutex_init|pthread_mutex_consistent"
os_calls="$os_calls|semget|semop|semtimedop|semctl|shmget|shmat|shmdt|shmctl|sem_open|sem_close|sem_unlink|sem_wait|sem_trywait|sem_timedwait|sem_clockwait|sem_post|sem_getvalue|shm_open|shm_unlink"
os_calls="$os_calls|getenv|secure_getenv|dlopen|dlsym|dlclose|dlerror|sched_yield|sched_setscheduler|sched_getscheduler|uname|sysconf|getrlimit|setrlimit)$"

# The clocks, sleeps, timers and timed waits, checked in the command's
# objects as well. libc's by name; C++'s by mangled name, without the
# inline namespace Abseil puts its names in (absl::debian3::Now() is
# _ZN4absl7debian33NowEv) nor the one libstdc++ puts its clocks in
# (std::chrono::_V2::): absl::Now() and GetCurrentTimeNanos();
# absl::SleepFor(), an inline call of AbslInternalSleepFor (with the
# namespace's name appended); Abseil's ...WithTimeout and ...WithDeadline
# waits (Mutex, CondVar, Notification); every std::chrono clock's now();
# std::this_thread's sleep where it is not an inline nanosleep(); and the
# timed waits of std::future and std::atomic.
time_calls='^(clock_gettime|clock_getres|clock_nanosleep|gettimeofday|time|ftime|nanosleep|usleep|sleep|alarm|setitimer|getitimer'
time_calls="$time_calls|timer_create|timer_settime|timer_gettime|timer_getoverrun|timer_delete|timerfd_create|timerfd_settime|timerfd_gettime"
time_calls="$time_calls|pthread_cond_timedwait|pthread_cond_clockwait|pthread_mutex_timedlock|pthread_mutex_clocklock"
time_calls="$time_calls|pthread_rwlock_timedrdlock|pthread_rwlock_timedwrlock|pthread_rwlock_clockrdlock|pthread_rwlock_clockwrlock"
time_calls="$time_calls|sem_timedwait|sem_clockwait|semtimedop|sigtimedwait)$"
time_calls="$time_calls|^_ZN4absl([0-9]+[A-Za-z_][A-Za-z0-9_]*)?(3Now|19GetCurrentTimeNanos)Ev$|^AbslInternalSleepFor(_|$)"
time_calls="$time_calls|^_ZNK?4absl.*With(Timeout|Deadline)E|^_ZNSt.*clock3nowEv$|^_ZNSt11this_thread11__sleep_for"
time_calls="$time_calls|_M_futex_wait_until|__atomic_wait.*_until|__platform_wait_until"

if ! command -v "$nm_tool" >/dev/null 2>&1; then
  echo "skipped: no $nm_tool"
  exit 77
fi
# One nm over both archives (-A names each object) and one awk over its
# lines: a process or three per object took half a minute on a loaded
# machine, and a static check must not depend on the machine's speed.
symbols=$("$nm_tool" -u -A "$lib" ${cli:+"$cli"} 2>/dev/null) ||
  { echo "os_seam_test: $nm_tool cannot read $lib${cli:+ or $cli}" >&2; exit 1; }
if [ -z "$symbols" ]; then
  echo "skipped: $nm_tool reads no undefined symbol in $lib (LTO objects?)"
  exit 77
fi
# "LIB:OBJECT: U SYMBOL[@VERSION]" -> "OBJECT CALL" for each OS call of an
# object of the library
# outside src/platform/ (platform_*), and each time call of an object of
# the command but its time_calls.cc (ipclock_time_calls.cc.o). open64 and
# open are one call (the 64 names are what x86-64 headers pick with 64-bit
# file offsets): listed by the base name.
found=$(printf '%s\n' "$symbols" | awk -v calls="$os_calls" -v time_calls="$time_calls" \
    -v lib="$lib:" '
  {
    sym = $NF; sub(/@.*/, "", sym)
    timed = sym ~ time_calls
    if (!timed && sym !~ calls) next
    of_lib = index($1, lib) == 1
    # "LIB:OBJECT:" (or "LIB:OBJECT:0000" with some nm); a thin archive
    # names its objects by path
    obj = $1; sub(/:[^:]*$/, "", obj); sub(/.*:/, "", obj); sub(/.*\//, "", obj)
    if (of_lib ? obj ~ /^platform_/ : (!timed || obj == "ipclock_time_calls.cc.o")) next
    if (sym !~ /^_Z/) sub(/64$/, "", sym)
    print obj " " sym
  }' | sort -u)

new=$(printf '%s\n' "$found" | grep -v '^$' | grep -vxF -f "$allow" || true)
if [ -n "$new" ]; then
  echo "os_seam_test: OS calls outside src/platform/ that $allow does not list:" >&2
  # C++ names demangled where c++filt is at hand, after the comparison
  if command -v "${CXXFILT:-c++filt}" >/dev/null 2>&1; then
    printf '%s\n' "$new" | "${CXXFILT:-c++filt}"
  else
    printf '%s\n' "$new"
  fi | sed 's/^/  /' >&2
  echo "route each through a function of src/platform/ (in the command: of tools/ipclock/time_calls.cc; or, if it must stay, add its line with a reason above it)" >&2
  exit 1
fi
echo "OS calls outside src/platform/: $(printf '%s' "$found" | grep -c .) (object, call) pairs, all listed in the allowlist ($(grep -cv '^#' "$allow") lines)"
