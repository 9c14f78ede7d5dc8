#!/bin/sh
# Fails if the library's sources or public headers use C++ exceptions. The
# build also passes -fno-exceptions, which rejects throw/try/catch outright;
# this check keeps the sources honest for builds that forget the flag.
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
hits=$(grep -rnE '(^|[^A-Za-z_])(throw|try|catch)([^A-Za-z_]|$)' \
         "$root/src" "$root/include" --include='*.cc' --include='*.h' \
       | grep -vE '^[^:]+:[0-9]+:\s*(//|\*)' | grep -vE '//.*\b(throw|try|catch)\b')
if [ -n "$hits" ]; then
  echo "exceptions in library sources:"
  echo "$hits"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
