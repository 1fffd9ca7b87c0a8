#!/usr/bin/env bash
# Santos, Turner, Janakiraman (INFOCOM 2003) reproduced: runs the committed scenarios of
# configs/scenarios/santos/ and the buffer sweep of S-B7, prints the figures of
# docs/experiments/santos.md and writes its plots.
#   scripts/santos-experiments.sh [RESULTS_DIR] [PLOTS_DIR]   (default results/santos, docs/experiments)
# Needs a build (scripts/build.sh), python3 and gnuplot. About a minute on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${IBEMU_BUILD_DIR:-build}/emulator/ibemu
OUT=${1:-results/santos}
PLOTS=${2:-docs/experiments}
S=configs/scenarios/santos
mkdir -p "$OUT" "$PLOTS"
run() {  # run SCENARIO_FILE NAME
  "$B" run "$1" -o "$OUT/$2" > "$OUT/$2.log" 2>&1 || {
    cat "$OUT/$2.log" >&2
    exit 1
  }
}

# One run and its rates plot over (FROM_MS, TO_MS].
figure() {  # figure SCENARIO NAME FROM_MS TO_MS TITLE
  run "$S/$1.yaml" "$2"
  scripts/santos_plot.py rates "$OUT/$2" "$PLOTS/santos-$2.png" "$5" "$3" "$4"
}

echo "== S-B1 to S-B5: rates (fractions of the 1 GB/s link) =="
figure s-b1-no-cc s-b1 45 60 "S-B1 (Fig. 2): L=5, R=1, victim 40-60 ms, no congestion control"
figure s-b2-window s-b2 45 60 "S-B2 (Fig. 3b): the same with a window of one packet"
figure s-b3-window-r5 s-b3 45 60 "S-B3 (Fig. 3c): L=5, R=5, victim 40-60 ms, window of one packet"
figure s-b4-oracle s-b4 45 60 \
  "S-B4 (Fig. 3d): the same at oracle rates (1/10 each, 1/2 the victim), no CC"
figure s-b5-naive s-b5-naive 20 100 "S-B5 (Fig. 4a): L=R=10, victim; LIPD, window 1, naive marking"
figure s-b5-proposed s-b5-proposed 20 100 \
  "S-B5 (Fig. 4b): L=R=10, victim; LIPD, window 1, proposed marking"

echo "== S-B6: recovery from R_min =="
scripts/santos_plot.py recovery "$PLOTS/santos-s-b6.png"

echo "== S-B7: utilisation against the input buffer size =="
TABLE=$OUT/s-b7.csv
echo "rate,form,buffer_packets,root,isl,local,remote,victim" > "$TABLE"
for rate in lipd fimd aimd; do
  for form in discrete continuous; do
    for packets in 2 4 8 16; do
      name=s-b7-$rate-$form-$packets
      # A 2048-byte packet takes 33 blocks of 64 bytes (2112 bytes) of a buffer.
      sed -e "s/rate: lipd, discrete: true/rate: $rate, discrete: $([ $form = discrete ] && echo true || echo false)/" \
        -e "s/vl_buffer_bytes: 8448/vl_buffer_bytes: $((packets * 2112))/" \
        -e "s#file: ../../topologies/santos.topo#file: $PWD/configs/topologies/santos.topo#" \
        $S/s-b7.yaml > "$OUT/$name.yaml"
      run "$OUT/$name.yaml" "$name"
      line=$(scripts/santos_plot.py rates "$OUT/$name" "$OUT/$name.png" "$name" 100 500)
      echo "$line"
      echo "$line" | sed -E "s/.*local ([0-9.]+), remote ([0-9.]+), victim ([0-9.]+), root link ([0-9.]+), inter-switch link ([0-9.]+).*/$rate,$form,$packets,\4,\5,\1,\2,\3/" >> "$TABLE"
    done
  done
done
scripts/santos_plot.py sweep "$TABLE" "$PLOTS/santos-s-b7.png"
rm -f "$PLOTS"/santos-*.png.dat
echo "plots in $PLOTS/santos-*.png; runs and $TABLE in $OUT"
