#!/usr/bin/env bash
# Nachiondo, Flich and Duato (DDBBM) reproduced: runs the committed scenarios of
# configs/scenarios/dbbm/ (Table 1: the 64-node BMIN's #1B-#5B, the 1024-node #7B and the meshes
# #1M-#9M) once per queuing scheme, prints the figures of docs/experiments/dbbm.md and writes its
# plots.
#   scripts/dbbm-experiments.sh [RESULTS_DIR] [PLOTS_DIR]   (default results/dbbm, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot. About 17 minutes on one core, 12.5 of
# them #7B's.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/dbbm}
PLOTS=${2:-docs/experiments}
mkdir -p "$PLOTS"
scripts/run-scenario-dir.sh configs/scenarios/dbbm "$OUT"
scripts/dbbm_plot.py "$OUT" "$PLOTS"
