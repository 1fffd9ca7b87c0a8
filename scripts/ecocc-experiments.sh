#!/usr/bin/env bash
# The thesis's Paper VI (EcoCC) reproduced: runs the committed scenarios of
# configs/scenarios/ecocc/ (configurations #1 and #2, traffic patterns #1, #2 and #3) once per
# scheme, prints the figures of docs/experiments/ecocc.md and writes its plots. With --large, also
# configuration #3 under pattern #2 (configs/scenarios/ecocc-large/, about 35 minutes on one core).
#   scripts/ecocc-experiments.sh [--large] [RESULTS_DIR] [PLOTS_DIR]
#   (default results/ecocc, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot. About twenty minutes on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
LARGE=0
if [ "${1:-}" = --large ]; then
  LARGE=1
  shift
fi
OUT=${1:-results/ecocc}
PLOTS=${2:-docs/experiments}
mkdir -p "$PLOTS"
scripts/run-scenario-dir.sh configs/scenarios/ecocc "$OUT"
scripts/ecocc_plot.py "$OUT" "$PLOTS"
if [ "$LARGE" = 1 ]; then
  scripts/run-scenario-dir.sh configs/scenarios/ecocc-large "$OUT"
  scripts/ecocc_plot.py "$OUT" "$PLOTS" --large
fi
