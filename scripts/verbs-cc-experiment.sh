#!/usr/bin/env bash
# Two RC flows from unmodified verbs programs into one host (docs/experiments/verbs-ib-cc.md):
# brings SCENARIO up at PACE, runs ib_write_bw (64 KiB RDMA WRITEs) from H2 to H1, and once
# 10 ms of virtual time have passed a second one from H4 to H1, waits for both, and takes the
# fabric down, which writes the results (flows.csv with each QP's throughput and CCTI,
# ports.csv with the FECN and BECN counts, throughput.png, ccti.png) into OUTDIR.
#   scripts/verbs-cc-experiment.sh SCENARIO OUTDIR [PACE] [ITERATIONS_FIRST] [ITERATIONS_SECOND]
# PACE defaults to 0.001 (a 60 ms experiment takes about a minute); the iterations to 900 and 600.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(realpath "${IBEMU_BUILD_DIR:-build}")/emulator/ibemu
if [ $# -lt 2 ]; then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
SCENARIO=$1
OUT=$2
PACE=${3:-0.001}
N1=${4:-900}
N2=${5:-600}
for tool in ib_write_bw stdbuf; do
  command -v $tool > /dev/null || {
    echo "verbs-cc-experiment: $tool is not installed (scripts/install-deps.sh)" >&2
    exit 1
  }
done
RUN=$(mktemp -d /tmp/ibemu-verbs-cc.XXXXXX)
export IBEMU_RUN_DIR=$RUN
NAME=vcc
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null || true; done
  "$B" down --name $NAME --timeout 30 > /dev/null 2>&1 || true
  rm -rf "$RUN"
}
trap cleanup EXIT
fail() {
  echo "verbs-cc-experiment: $*" >&2
  for f in "$RUN"/*.log; do
    echo "--- $f" >&2
    tail -20 "$f" >&2
  done
  exit 1
}
# Waits until COMMAND succeeds, at most SECONDS.   wait_for SECONDS WHAT COMMAND...
wait_for() {
  local limit=$1 what=$2
  shift 2
  local until=$((SECONDS + limit))
  until "$@" > /dev/null 2>&1; do
    [ $SECONDS -lt $until ] || fail "gave up after $limit s waiting for $what"
    sleep 0.1
  done
}
vtime() { "$B" status --name $NAME | sed -nE 's/^virtual time ([0-9.]+) s.*/\1/p'; }
past() { [ "$(echo "$(vtime) >= $1" | bc)" -eq 1 ]; }

"$B" up "$SCENARIO" --pace "$PACE" --name $NAME -o "$OUT" > "$RUN/up.log" 2>&1 &
wait_for 30 "the fabric" "$B" status --name $NAME
# The built-in subnet manager brings the ports up within the first virtual millisecond.
wait_for 60 "the ports to be active" \
  sh -c '"$0" exec --name "$1" --hca H1 -- ibv_devinfo | grep -q PORT_ACTIVE' "$B" $NAME

# flow SOURCE ITERATIONS TAG: ib_write_bw's server on H1, its client on SOURCE. The TCP port of
# perftest's handshake is random; a server that ends before it waits for its client (the port
# was taken by another program) is started again on another.
flow() {
  local port server
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 30000))
    "$B" exec --name $NAME --hca H1 -- stdbuf -oL ib_write_bw -s 65536 -n "$2" -p $port \
      > "$RUN/$3-server.log" 2>&1 &
    server=$!
    wait_for 30 "the $3 server" \
      sh -c 'grep -q "Waiting for client" "$0" || ! kill -0 "$1"' "$RUN/$3-server.log" $server
    grep -q "Waiting for client" "$RUN/$3-server.log" && break
    wait $server || true
    server=
  done
  [ -n "$server" ] || fail "the $3 server found no free port"
  PIDS+=($server)
  "$B" exec --name $NAME --hca "$1" -- ib_write_bw -s 65536 -n "$2" -p $port localhost \
    > "$RUN/$3-client.log" 2>&1 &
  PIDS+=($!)
}
t0=$(vtime)
flow H2 "$N1" first
echo "first flow (H2 -> H1) from $(vtime) s of virtual time"
wait_for 600 "10 ms of virtual time" past "$(echo "$t0 + 0.010" | bc)"
flow H4 "$N2" second
echo "second flow (H4 -> H1) from $(vtime) s of virtual time"
for p in "${PIDS[@]}"; do wait "$p" || fail "an ib_write_bw failed"; done
PIDS=()
for tag in first second; do
  echo "$tag: $(awk '$1 == 65536 {print "ib_write_bw reports", $4, "MB/s of wall time"}' "$RUN/$tag-client.log")"
done
echo "both done at $(vtime) s of virtual time"
"$B" down --name $NAME --timeout 60 > /dev/null
grep -E "^(flow|H[0-9])" "$RUN/up.log" || true
echo "results in $OUT/"
