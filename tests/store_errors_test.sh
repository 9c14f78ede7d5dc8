#!/bin/sh
# Fails on a status code spelled in a store. A store says what went wrong
# with the constructor of its fault class (core/store_errors.h:
# ConfigurationError, TransientError, LostError, ...), which gives the code
# that the CLI's exit statuses and the C API's error numbers are read from;
# a code spelled by hand is a class chosen twice, and the two may part.
# Refused anywhere under src/stores/:
#   * absl::XxxError(...)        (absl::InvalidArgumentError and the like)
#   * absl::Status(...)          (a code and a message put together by hand)
#   * absl::StatusCode::kXxx     (a code named, compared or passed on)
# Asking about a status stays open (absl::IsUnavailable(s), IsTransient(s)).
#
# One grep over the tree, so that the check takes well under a second.
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
cd "$root" || exit 1
[ -d src/stores ] || { echo "store_errors_test: no src/stores under $root" >&2; exit 1; }

bad=$(grep -rnE 'absl::[A-Za-z]*Error\(|absl::Status\(|absl::StatusCode::k' src/stores)
if [ -n "$bad" ]; then
  echo "status codes spelled in a store (use the constructors of core/store_errors.h):"
  echo "$bad"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
