#!/usr/bin/env bash
# Thottethodi, Lebeck, Mukherjee (HPCA 2001) reproduced: sweeps the uniform load on the 16x16
# torus of configs/scenarios/selftuned/ for every scheme (Fig. 3, 5), runs the bursty load
# (Fig. 6, 7), prints the figures of docs/experiments/selftuned.md and writes its plots.
#   scripts/selftuned-experiments.sh [RESULTS_DIR] [PLOTS_DIR]   (default results/selftuned, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot. About 90 s on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${IBEMU_BUILD_DIR:-build}/emulator/ibemu
OUT=${1:-results/selftuned}
PLOTS=${2:-docs/experiments}
S=configs/scenarios/selftuned
LOADS="0.05 0.1 0.15 0.2 0.25 0.3 0.4 0.6 0.8 1.0"
mkdir -p "$OUT" "$PLOTS"
run() {  # run SCENARIO_FILE NAME
  "$B" run "$1" -q --no-plot -o "$OUT/$2" > "$OUT/$2.log" 2>&1 || {
    cat "$OUT/$2.log" >&2
    exit 1
  }
}
for scheme in base alo tune static164 static33; do
  for load in $LOADS; do
    sed "s/^    load: 0.5 .*/    load: $load/" "$S/torus-uniform-$scheme.yaml" > "$OUT/uniform-$scheme-$load.yaml"
    run "$OUT/uniform-$scheme-$load.yaml" "uniform-$scheme-$load"
  done
done
for scheme in base alo tune; do run "$S/torus-bursty-$scheme.yaml" "bursty-$scheme"; done
scripts/selftuned_plot.py "$OUT" "$PLOTS/selftuned" $LOADS
