#!/bin/sh
# Fails when an object of libipclock.a outside src/platform/ imports an
# operating-system call (a file, socket, process, clock, signal, thread or
# IPC call of libc) that tests/os_seam_allowlist.txt does not list for it.
#
# src/platform/ is where the library meets the kernel: a new call belongs
# there, behind a function that says what it is for and keeps its caveats
# (EINTR, errno, fork) in one place. The allowlist is what still bypasses
# the seam; it may only shrink. To remove an entry, route the call through
# src/platform/ and delete its line; this test then fails if the call comes
# back.
#
# Usage: os_seam_test.sh LIBIPCLOCK.A. Exit 77 (skipped) where nm cannot
# read the objects (an LTO build's objects hold no machine code).
lib="$1"
case "$lib" in /*) ;; *) lib="$PWD/$lib" ;; esac
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

if ! command -v "$nm_tool" >/dev/null 2>&1; then
  echo "skipped: no $nm_tool"
  exit 77
fi
# One nm over the whole archive (-A names each object) and one awk over its
# lines: a process or three per object took half a minute on a loaded
# machine, and a static check must not depend on the machine's speed.
symbols=$("$nm_tool" -u -A "$lib" 2>/dev/null) ||
  { echo "os_seam_test: $nm_tool cannot read $lib" >&2; exit 1; }
if [ -z "$symbols" ]; then
  echo "skipped: $nm_tool reads no undefined symbol in $lib (LTO objects?)"
  exit 77
fi
# "LIB:OBJECT: U SYMBOL[@VERSION]" -> "OBJECT CALL" for each OS call of an
# object outside src/platform/ (platform_*). open64 and open are one call
# (the 64 names are what x86-64 headers pick with 64-bit file offsets):
# listed by the base name.
found=$(printf '%s\n' "$symbols" | awk -v calls="$os_calls" '
  {
    sym = $NF; sub(/@.*/, "", sym)
    if (sym !~ calls) next
    # "LIB:OBJECT:" (or "LIB:OBJECT:0000" with some nm); a thin archive
    # names its objects by path
    obj = $1; sub(/:[^:]*$/, "", obj); sub(/.*:/, "", obj); sub(/.*\//, "", obj)
    if (obj ~ /^platform_/) next
    sub(/64$/, "", sym)
    print obj " " sym
  }' | sort -u)

new=$(printf '%s\n' "$found" | grep -v '^$' | grep -vxF -f "$allow" || true)
if [ -n "$new" ]; then
  echo "os_seam_test: OS calls outside src/platform/ that $allow does not list:" >&2
  printf '%s\n' "$new" | sed 's/^/  /' >&2
  echo "route each through a function of src/platform/ (or, if it must stay, add its line with a reason above it)" >&2
  exit 1
fi
echo "OS calls outside src/platform/: $(printf '%s' "$found" | grep -c .) (object, call) pairs, all listed in the allowlist ($(grep -cv '^#' "$allow") lines)"
