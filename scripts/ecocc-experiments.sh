#!/usr/bin/env bash
# The thesis's Paper VI (EcoCC) reproduced: runs the committed scenarios of
# configs/scenarios/ecocc/ (configurations #1 and #2, traffic pattern #2) once per
# scheme, prints the figures of docs/experiments/ecocc.md and writes its plots.
#   scripts/ecocc-experiments.sh [RESULTS_DIR] [PLOTS_DIR]  (default results/ecocc, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot. About five minutes on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/ecocc}
PLOTS=${2:-docs/experiments}
mkdir -p "$PLOTS"
scripts/run-scenario-dir.sh configs/scenarios/ecocc "$OUT"
scripts/ecocc_plot.py "$OUT" "$PLOTS"
