#!/usr/bin/env bash
# The thesis's Paper V (CCFIT) case #4 reproduced: runs the committed scenarios of
# configs/scenarios/ccfit/ (4-ary 3-tree, 1, 4 and 6 congestion trees from 1 to 2 ms) once per
# scheme, prints the figures of docs/experiments/ccfit.md and writes its plots.
#   scripts/ccfit-experiments.sh [RESULTS_DIR] [PLOTS_DIR]  (default results/ccfit, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot. About half a minute on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/ccfit}
PLOTS=${2:-docs/experiments}
mkdir -p "$PLOTS"
scripts/run-scenario-dir.sh configs/scenarios/ccfit "$OUT"
scripts/ccfit_plot.py "$OUT" "$PLOTS"
