#!/usr/bin/env bash
# Build the API reference of the public headers (docs/Doxyfile.in, configured into
# the build tree) and fail on any doxygen warning or error: the Doxyfile sets
# WARN_AS_ERROR and WARN_IF_UNDOCUMENTED, and this also fails on any line doxygen
# writes to stderr.
#   doxygen_check.sh DOXYGEN DOXYFILE
# Exit 0 clean; 1 with doxygen's messages.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: doxygen_check.sh DOXYGEN DOXYFILE" >&2; exit 2; }
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
rc=0
"$1" "$2" > /dev/null 2> "$errors" || rc=$?
if [ $rc -ne 0 ] || [ -s "$errors" ]; then
  echo "FAIL: doxygen exit $rc on the public headers:"
  cat "$errors"
  exit 1
fi
echo "doxygen: the public headers are documented without a warning"
