#!/usr/bin/env bash
# Configures and builds into build/ (or $IBEMU_BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${IBEMU_BUILD_DIR:-build}
JOBS=${IBEMU_JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
