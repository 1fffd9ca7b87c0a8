#!/usr/bin/env bash
# Nachiondo, Flich and Duato (DDBBM) reproduced: runs the committed scenarios of
# configs/scenarios/dbbm/ (64-node BMIN, Table 1 cases #1B-#5B) once per queuing scheme, prints
# the figures of docs/experiments/dbbm.md and writes its plots.
#   scripts/dbbm-experiments.sh [RESULTS_DIR] [PLOTS_DIR]   (default results/dbbm, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot. About a minute on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/dbbm}
PLOTS=${2:-docs/experiments}
mkdir -p "$PLOTS"
scripts/run-scenario-dir.sh configs/scenarios/dbbm "$OUT"
scripts/dbbm_plot.py "$OUT" "$PLOTS"
