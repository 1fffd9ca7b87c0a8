#!/usr/bin/env bash
# Verbs through the emulator, side by side with plain ZeroMQ on the same machine, in one run:
#   - ZeroMQ over ipc:// between two processes (build/bench/ibemu_bench_zmq): the round trip of a
#     2-byte message, and a stream of 64 KiB messages;
#   - unmodified Debian verbs programs on H3 and H1 of a fabric that is up at pace 1
#     (configs/scenarios/bench/verbs-edr.yaml: 4x EDR, MTU 4096, so the links are faster than the
#     emulator and the wall clock measures the emulator): ib_write_lat and ibv_rc_pingpong -e for
#     the round trip of 2 bytes, ib_write_bw for 64 KiB RDMA WRITEs.
# The goals of issue 9: verbs round trip within 3x ZeroMQ's, 64 KiB WRITE bandwidth at least half
# the ZeroMQ stream's. Figures in docs/performance.md.
#   bench/verbs_bench.sh [ITERATIONS]      (default 5000)
# Needs a build (scripts/build.sh) and the packages of scripts/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${IBEMU_BUILD_DIR:-build}
B=$BUILD/emulator/ibemu
Z=$BUILD/bench/ibemu_bench_zmq
N=${1:-5000}
for tool in ib_write_lat ib_write_bw ibv_rc_pingpong; do
  command -v $tool > /dev/null || {
    echo "verbs_bench: $tool is not installed (scripts/install-deps.sh)" >&2
    exit 1
  }
done
[ -x "$Z" ] || {
  echo "verbs_bench: $Z is missing (scripts/build.sh)" >&2
  exit 1
}
WORK=$(mktemp -d /tmp/ibemu-verbs-bench.XXXXXX)
export IBEMU_RUN_DIR=$WORK
trap '"$B" down --name vb --timeout 30 > /dev/null 2>&1 || true; pkill -f "$WORK" 2> /dev/null || true; rm -rf "$WORK"' EXIT
PORT=$((20000 + $$ % 20000))

# Each verbs test: the server on H1 in the background, the client on H3; the client's output.
pair() {  # pair PROGRAM ARGS...
  local prog=$1
  shift
  PORT=$((PORT + 1))
  timeout 120 "$B" exec --name vb --hca H1 -- "$prog" -p $PORT "$@" > "$WORK/server.log" 2>&1 &
  local server=$!
  sleep 1
  timeout 120 "$B" exec --name vb --hca H3 -- "$prog" -p $PORT "$@" localhost > "$WORK/client.log" 2>&1 ||
    {
      echo "verbs_bench: $prog $* failed:" >&2
      cat "$WORK/client.log" "$WORK/server.log" >&2
      exit 1
    }
  wait $server
  cat "$WORK/client.log"
}

echo "machine: $(nproc) cores; $N iterations each"
zlat=$("$Z" pingpong 2 "$N")
zbw=$("$Z" stream 65536 $((4 * N)))  # long enough to be steady
echo "$zlat"
echo "$zbw"
z_rtt=$(echo "$zlat" | sed -E 's/.*median ([0-9.]+) us.*/\1/')
z_mean=$(echo "$zlat" | sed -E 's/.*mean ([0-9.]+) us.*/\1/')
z_bw=$(echo "$zbw" | sed -E 's/.*: ([0-9.]+) MB\/s.*/\1/')

"$B" up configs/scenarios/bench/verbs-edr.yaml --pace 1 --name vb -q -o "$WORK/res" > "$WORK/up.log" 2>&1 &
for _ in $(seq 100); do
  "$B" status --name vb > /dev/null 2>&1 && break
  sleep 0.1
done
# ib_write_lat prints half the round trip (t_typical: the median; t_avg: the mean).
wl=$(pair ib_write_lat -s 2 -n "$N" | awk '$1 == 2 && NF >= 6 {print $5, $6}')
v_rtt=$(echo "$wl" | awk '{printf "%.1f", 2 * $1}')
v_mean=$(echo "$wl" | awk '{printf "%.1f", 2 * $2}')
# ibv_rc_pingpong -e: SEND/RECV, waiting on the completion channel as the ZeroMQ side waits in
# recv; one iteration is one round trip.
v_pp=$(pair ibv_rc_pingpong -e -s 2 -n "$N" | sed -nE 's/.* = ([0-9.]+) usec\/iter/\1/p')
v_bw=$(pair ib_write_bw -s 65536 -n "$N" | awk '$1 == 65536 {print $4}')
"$B" status --name vb | grep -E "virtual time" || true

printf '\n%-46s %12s %12s %8s\n' "" verbs zeromq ratio
printf '%-46s %12s %12s %8.2f\n' "round trip, 2 bytes, median (us)" "$v_rtt" "$z_rtt" \
  "$(echo "$v_rtt / $z_rtt" | bc -l)"
printf '%-46s %12s %12s %8.2f\n' "round trip, 2 bytes, mean (us)" "$v_mean" "$z_mean" \
  "$(echo "$v_mean / $z_mean" | bc -l)"
printf '%-46s %12s %12s %8.2f\n' "round trip, SEND/RECV with events (us)" "$v_pp" "$z_mean" \
  "$(echo "$v_pp / $z_mean" | bc -l)"
printf '%-46s %12s %12s %8.2f\n' "64 KiB stream, RDMA WRITE (MB/s)" "$v_bw" "$z_bw" \
  "$(echo "$v_bw / $z_bw" | bc -l)"
echo "goals: median round trip ratio <= 3; bandwidth ratio >= 0.5"
