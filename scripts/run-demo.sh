#!/usr/bin/env bash
# The main job: install what is missing, build, and run the default scenario (the thesis test bed,
# scenario 1, congestion control off) on the embedded single-process fabric. Prints the result
# table and writes results/testbed-scenario1/ with CSV, JSON and throughput.png.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/emulator/ibemu run configs/scenarios/testbed-scenario1.yaml "$@"
