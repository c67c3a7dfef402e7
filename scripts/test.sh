#!/usr/bin/env bash
# The test suite: installs what it needs, builds warning-checked, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
log=$(mktemp)
swift build --build-tests 2>&1 | tee "$log" >&2
# A wrong pkgConfig name only warns on Debian and still builds: fail on it.
if grep -qiE "warning: .*(pkg-config|pc file|system library)" "$log"; then
  echo "error: pkg-config warning in the build (see above)" >&2
  exit 1
fi
# Tests run in parallel threads; OpenBLAS's own thread pool on top of them
# only oversubscribes the cores (and its workers spin while they wait).
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
swift test --skip-build "$@"
