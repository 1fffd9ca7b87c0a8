#!/usr/bin/env bash
# Ferrer et al. (IEEE TC 2012), MVCM S-A1 reproduced: runs the committed scenarios of
# configs/scenarios/mvcm/ (4-ary 4-fly, Table 3 traffic) once per scheme, prints the figures of
# docs/experiments/mvcm.md and writes its plots.
#   scripts/mvcm-experiments.sh [RESULTS_DIR] [PLOTS_DIR]   (default results/mvcm, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot. About five minutes on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${IBEMU_BUILD_DIR:-build}/emulator/ibemu
OUT=${1:-results/mvcm}
PLOTS=${2:-docs/experiments}
S=configs/scenarios/mvcm
mkdir -p "$OUT" "$PLOTS"
run() {  # run FLY SCHEME
  "$B" run "$S/s-a1-$1-$2.yaml" -o "$OUT/$1-$2" > "$OUT/$1-$2.log" 2>&1 || {
    cat "$OUT/$1-$2.log" >&2
    exit 1
  }
}
for fly in 4fly 3fly; do
  for scheme in none santos ib mvcm; do run "$fly" "$scheme"; done
  echo "== S-A1 on the 4-ary ${fly%fly}-fly =="
  scripts/mvcm_plot.py "$OUT" "$fly" "$PLOTS/mvcm-s-a1-$fly"
done
for scheme in static1 static2 static5 validated-ib pure-ipm no-warm no-cap; do
  run 4fly "mvcm-$scheme"
done
echo "== S-A1 on the 4-ary 4-fly: the paper's ablations of MVCM =="
scripts/mvcm_plot.py "$OUT" 4fly --ablations
