#!/usr/bin/env bash
# Install what is missing, build, and run every test (unit, integration, interop) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd "${IBEMU_BUILD_DIR:-build}"
ctest --output-on-failure -j "${IBEMU_JOBS:-$(nproc)}" "$@"
