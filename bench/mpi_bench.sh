#!/usr/bin/env bash
# MPI ping-pong through the emulator beside the same program over Open MPI's TCP BTL on loopback,
# in one run (issue 12, must-show 5). bench/mpi/pingpong_bench.c, built with mpicc, runs:
#   - over the emulated fabric: `ibemu mpirun` on H1 and H8 of configs/scenarios/mpi/fat-tree-8.yaml
#     (4x QDR, two leaves and a spine apart) at pace 1, so the wall clock measures the emulator
#     wherever the emulator is slower than the link (docs/mpi.md, "Time");
#   - over TCP: plain mpirun with `--mca btl self,tcp` on the loopback interface, the same two
#     processes on this machine.
# Prints both tables and the emulator/TCP ratios. Figures in docs/performance.md.
#   bench/mpi_bench.sh [SCALE]     (iterations x SCALE; default 1)
# Needs a build (scripts/build.sh) and the packages of scripts/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${IBEMU_BUILD_DIR:-build}
B=$BUILD/emulator/ibemu
SCALE=${1:-1}
command -v mpicc > /dev/null || {
  echo "mpi_bench: mpicc is not installed (scripts/install-deps.sh)" >&2
  exit 1
}
WORK=$(mktemp -d /tmp/ibemu-mpi-bench.XXXXXX)
export IBEMU_RUN_DIR=$WORK
trap '"$B" down --name mb --timeout 30 > /dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
# Open MPI refuses root unless told twice; the bench runs as whoever runs it.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc -O2 -o "$WORK/pingpong_bench" bench/mpi/pingpong_bench.c

"$B" up configs/scenarios/mpi/fat-tree-8.yaml --name mb --pace 1 -q -o "$WORK/results" \
  > "$WORK/up.log" 2>&1 &
"$B" status --name mb --wait 30 > /dev/null

"$B" mpirun --name mb --hosts H1,H8 -- -np 2 "$WORK/pingpong_bench" "$SCALE" \
  > "$WORK/emu.txt" 2> "$WORK/emu.err" || {
  cat "$WORK/emu.err" >&2
  exit 1
}
mpirun -np 2 --oversubscribe --bind-to none --mca pml ob1 --mca btl self,tcp \
  --mca btl_tcp_if_include lo "$WORK/pingpong_bench" "$SCALE" > "$WORK/tcp.txt" 2> "$WORK/tcp.err" || {
  cat "$WORK/tcp.err" >&2
  exit 1
}
echo "MPI ping-pong, one-way latency (us) and bandwidth (MB/s), wall clock (MPI_Wtime)"
echo "emulator: ibemu mpirun, H1 <-> H8 of a 4x QDR fat tree, pace 1, openib BTL"
echo "TCP:      mpirun --mca btl self,tcp on loopback, same machine"
"$B" status --name mb | grep -E "virtual time" || true
paste "$WORK/emu.txt" "$WORK/tcp.txt" | awk '
  NR == 1 { printf "%10s %12s %12s %12s %12s %10s %10s\n", "bytes", "emu_lat_us", "tcp_lat_us",
            "emu_MBps", "tcp_MBps", "lat_ratio", "bw_ratio"; next }
  { printf "%10d %12.2f %12.2f %12.2f %12.2f %10.2f %10.3f\n", $1, $2, $5, $3, $6, $2 / $5,
           $3 / $6 }'
