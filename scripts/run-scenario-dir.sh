#!/usr/bin/env bash
# Runs every scenario of a directory into OUT/<name>/ (no plots), stopping at the first failure
# with its log: the run step of the experiment scripts.
#   scripts/run-scenario-dir.sh SCENARIO_DIR OUT
set -euo pipefail
B=${IBEMU_BUILD_DIR:-build}/emulator/ibemu
mkdir -p "$2"
for f in "$1"/*.yaml; do
  n=$(basename "$f" .yaml)
  "$B" run "$f" -o "$2/$n" --no-plot > "$2/$n.log" 2>&1 || {
    cat "$2/$n.log" >&2
    exit 1
  }
done
