#!/usr/bin/env bash
# The thesis's Paper VI trace study (Fig. 8) reproduced with HPCC-like traces: runs the committed
# scenarios and traces of configs/scenarios/ecocc-traces/, prints the figures of
# docs/experiments/ecocc-traces.md and writes its plots.
#   scripts/ecocc-traces-experiments.sh [RESULTS_DIR] [PLOTS_DIR]
#   (default results/ecocc-traces, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/ecocc-traces}
PLOTS=${2:-docs/experiments}
mkdir -p "$PLOTS"
scripts/run-scenario-dir.sh configs/scenarios/ecocc-traces "$OUT"
scripts/ecocc_traces_plot.py "$OUT" "$PLOTS"
