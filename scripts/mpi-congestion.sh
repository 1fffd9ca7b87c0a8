#!/usr/bin/env bash
# The MPI congestion experiment (docs/experiments/mpi-congestion.md): an unmodified MPI all-to-all
# (scripts/mpi/alltoall_timed.c, 64 KiB per pair) on H1, H5, H9 and H13 of a 16-host fat tree,
#   - alone (configs/scenarios/mpi/fat-tree-16.yaml),
#   - beside two congestion trees built by ten synthetic sources into H15 and H16, IB CC off
#     (hotspot-cc-off.yaml),
#   - the same with IB CC on (hotspot-cc-on.yaml).
# Each fabric is brought up at PACE (0.001: 1 ms of wall time is 1 us of virtual time, and the
# fabric keeps up with the trees), the trees have 2 ms of virtual time to grow, and the job runs
# ITERATIONS all-to-alls. Writes OUTDIR/{alone,cc-off,cc-on}.txt (iteration, wall us), each
# fabric's results (OUTDIR/<case>-fabric/), OUTDIR/summary.txt (the median and mean of each
# case in virtual us, and their ratios), and the plot OUTDIR/mpi-congestion.png.
#   scripts/mpi-congestion.sh [OUTDIR] [ITERATIONS] [PACE]   (results/mpi-congestion, 20, 0.001)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(realpath "${IBEMU_BUILD_DIR:-build}")/emulator/ibemu
OUT=$(realpath -m "${1:-results/mpi-congestion}")
N=${2:-20}
PACE=${3:-0.001}
command -v mpicc > /dev/null || {
  echo "mpi-congestion: mpicc is not installed (scripts/install-deps.sh)" >&2
  exit 1
}
mkdir -p "$OUT"
RUN=$(mktemp -d /tmp/ibemu-mpi-cc.XXXXXX)
export IBEMU_RUN_DIR=$RUN
NAME=mpicc
cleanup() {
  "$B" down --name $NAME --timeout 30 > /dev/null 2>&1 || true
  rm -rf "$RUN"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc -O2 -o "$RUN/alltoall_timed" scripts/mpi/alltoall_timed.c
vtime() { "$B" status --name $NAME | sed -nE 's/^virtual time ([0-9.]+) s.*/\1/p'; }

for c in alone:fat-tree-16 cc-off:hotspot-cc-off cc-on:hotspot-cc-on; do
  case=${c%%:*}
  scenario=configs/scenarios/mpi/${c#*:}.yaml
  "$B" up "$scenario" --pace "$PACE" --name $NAME -q -o "$OUT/$case-fabric" > "$RUN/up.log" 2>&1 &
  "$B" status --name $NAME --wait 30 > /dev/null
  until [ "$(echo "$(vtime) >= 0.002" | bc)" -eq 1 ]; do sleep 0.1; done
  "$B" mpirun --name $NAME --hosts H1,H5,H9,H13 -- -np 4 "$RUN/alltoall_timed" "$N" 65536 \
    > "$RUN/job.txt" 2> "$RUN/job.err" || {
    cat "$RUN/job.err" >&2
    exit 1
  }
  grep -E '^[0-9]+ [0-9.]+$' "$RUN/job.txt" > "$OUT/$case.txt"
  # The figures convert to virtual time only if the fabric kept its pace.
  if "$B" status --name $NAME | grep -q "behind by"; then
    echo "mpi-congestion: the fabric fell behind its pace in case $case; use a slower pace" >&2
    exit 1
  fi
  "$B" down --name $NAME --timeout 60 > /dev/null
done

# Medians and means without the first iteration (it opens the connections), in virtual us: wall
# us x pace. The median says what a typical iteration costs; the mean, what the job costs (the
# trees' stalls come and go, so some iterations under CC off run as fast as alone).
stat() {  # stat median|mean FILE
  awk -v p="$PACE" '$1 > 0 { print $2 * p }' "$2" | sort -g | awk -v what="$1" '
    { v[NR] = $1; s += $1 }
    END { if (what == "mean") print s / NR
          else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
{
  echo "all-to-all of 64 KiB per pair on 4 hosts, iterations 1..$((N - 1)), virtual us (wall x pace $PACE)"
  for what in median mean; do
    A=$(stat $what "$OUT/alone.txt")
    OFF=$(stat $what "$OUT/cc-off.txt")
    ON=$(stat $what "$OUT/cc-on.txt")
    printf "%s alone %.1f cc-off %.1f cc-on %.1f cc-off/alone %.2f cc-on/alone %.2f cc-off/cc-on %.2f\n" \
      $what "$A" "$OFF" "$ON" "$(echo "$OFF / $A" | bc -l)" "$(echo "$ON / $A" | bc -l)" \
      "$(echo "$OFF / $ON" | bc -l)"
  done
} | tee "$OUT/summary.txt"

if command -v gnuplot > /dev/null; then
  gnuplot <<GP
set terminal pngcairo size 900,450
set output "$OUT/mpi-congestion.png"
set title "MPI all-to-all (4 hosts, 64 KiB per pair) beside two congestion trees"
set xlabel "iteration"
set ylabel "time per all-to-all (virtual us)"
set key top right
set grid
plot "$OUT/alone.txt" using 1:(\$2*$PACE) with linespoints title "alone", \
     "$OUT/cc-off.txt" using 1:(\$2*$PACE) with linespoints title "hot spots, IB CC off", \
     "$OUT/cc-on.txt" using 1:(\$2*$PACE) with linespoints title "hot spots, IB CC on"
GP
fi
