#!/usr/bin/env bash
# Scale (issue 13, must-show 6): the largest three-level fat tree of 36-port switches, 11,664
# hosts in 1,620 switches, 4x QDR, 2 KB MTU, ftree routing, in one process. Not a test: it prints
# figures for docs/performance.md.
#
#   bench/scale_bench.sh [DURATION] [LOAD] [RADIX]      defaults: 100us 0.5 36
#
# Two runs of the same scenario: one of 1 ns (loading: topology, routing, building every device,
# bringing the links up, writing results) and one of DURATION. It prints the load time, peak
# memory and memory per node of each, and the packet-hops per wall second of the long run, over
# its whole wall time and over the part after loading.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-100us}
LOAD=${2:-0.5}
RADIX=${3:-36}
IBEMU=${IBEMU:-build/emulator/ibemu}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
sed -e "s/load: 0.5/load: $LOAD/" -e "s/radix: 36/radix: $RADIX/" \
  configs/scenarios/bench/fat-tree-11664-uniform50.yaml > "$TMP/scenario.yaml"

run() {  # $1 = label, $2 = duration
  /usr/bin/time -f "%e %M" -o "$TMP/$1.time" \
    "$IBEMU" run "$TMP/scenario.yaml" -q --no-plot --duration "$2" -o "$TMP/$1" > "$TMP/$1.out"
}

echo "ibemu scale benchmark: 3-level fat tree of $RADIX-port switches, 4x QDR, 2 KB MTU, ftree," \
  "uniform load $LOAD, $DURATION simulated"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
run load 1ns
run run "$DURATION"
python3 - "$TMP" "$RADIX" <<'PY'
import json, sys
tmp, radix = sys.argv[1], int(sys.argv[2])
h = radix // 2
nodes = radix * h * h + h * h + 2 * radix * h  # hosts, cores, aggregation and leaf switches
rows = {}
for label in ('load', 'run'):
    s = json.load(open(f'{tmp}/{label}/summary.json'))
    wall, rss_kb = open(f'{tmp}/{label}.time').read().split()
    rows[label] = dict(wall=float(wall), rss=max(int(rss_kb), s['peak_rss_kb']) / 1024,
                       events=s['events'], hops=s['packet_hops'], digest=s['digest'],
                       gbps=sum(f['rx_gbps'] for f in s['flows']),
                       offered=sum(f['tx_gbps'] for f in s['flows']),
                       p50=max(f['latency_p50_us'] for f in s['flows']))
print(f"nodes: {nodes}")
print(f"{'run':<6}{'wall s':>9}{'peak MiB':>10}{'KiB/node':>10}{'events':>13}{'packet-hops':>13}"
      f"{'Mhops/s':>9}{'rx Tb/s':>9}{'tx Tb/s':>9}{'p50 us':>8}  digest")
for k, r in rows.items():
    print(f"{k:<6}{r['wall']:>9.2f}{r['rss']:>10.0f}{r['rss']*1024/nodes:>10.1f}{r['events']:>13}"
          f"{r['hops']:>13}{r['hops']/r['wall']/1e6:>9.3f}{r['gbps']/1000:>9.2f}"
          f"{r['offered']/1000:>9.2f}{r['p50']:>8.2f}  {r['digest']}")
l, r = rows['load'], rows['run']
print(f"load time (a 1 ns run, results written): {l['wall']:.2f} s")
print(f"packet-hops per wall second after loading: {r['hops']/(r['wall']-l['wall'])/1e6:.3f} M")
PY
