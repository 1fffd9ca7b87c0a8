#!/usr/bin/env bash
# The engine's speed on one core (issue 13, must-show 1): the 648-node fat tree, 80 % uniform
# load, 4x QDR, 2 KB MTU, IB CC on (configs/scenarios/bench/fat-tree-648-uniform80-cc.yaml), in
# one process. Not a test: it prints figures for docs/performance.md.
#
#   bench/engine_bench.sh [DURATION]          default 2ms
#   IBEMU_BASE=/path/to/older/ibemu bench/engine_bench.sh 1ms
#
# It prints wall time, peak memory, events and packet-hops per wall second, the must-show's
# targets beside them, and the wall time 0.5 s of simulated time would take at this speed. With
# IBEMU_BASE it runs that binary too, alternating with this one (two runs each), and prints the
# speed ratio of each pair and whether the digests agree.
#
# Wall time on a shared machine swings by a factor of two from run to run. With INSTRUCTIONS=1 it
# also counts the instructions each binary executes per packet-hop (valgrind's cachegrind, from
# the difference between a 2 us and a 22 us run, so loading cancels out): a figure that does not
# depend on the machine's load, for comparing two builds, with the data cache misses per
# packet-hop of a simulated 48 KiB L1 and 2 MiB L2 (L2_BYTES sets another). Needs valgrind
# (apt-get install valgrind); each binary takes about a minute under it.
#
# The runs use huge pages for the heap (IBEMU_HUGE_PAGES=1, docs/cli.md) unless
# IBEMU_HUGE_PAGES=0 is set. A base binary older than that option runs with small pages either way.
set -euo pipefail
cd "$(dirname "$0")/.."
export IBEMU_HUGE_PAGES=${IBEMU_HUGE_PAGES:-1}
DURATION=${1:-2ms}
IBEMU=${IBEMU:-build/emulator/ibemu}
SCEN=configs/scenarios/bench/fat-tree-648-uniform80-cc.yaml
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

run() {  # $1 = label, $2 = binary
  /usr/bin/time -f "%e %M" -o "$TMP/$1.time" \
    "$2" run "$SCEN" -q --no-plot --duration "$DURATION" -o "$TMP/$1" > "$TMP/$1.out"
}

echo "ibemu engine benchmark: 648-node fat tree, 4x QDR, 2 KB MTU, 80 % uniform load, IB CC on, $DURATION simulated, one process"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); IBEMU_HUGE_PAGES=$IBEMU_HUGE_PAGES"
labels=(this)
run this "$IBEMU"
if [ -n "${IBEMU_BASE:-}" ]; then
  run base "$IBEMU_BASE"
  run this2 "$IBEMU"
  run base2 "$IBEMU_BASE"
  labels=(this base this2 base2)
fi
python3 - "$TMP" "$DURATION" "${labels[@]}" <<'PY'
import json, re, sys
tmp, dur, labels = sys.argv[1], sys.argv[2], sys.argv[3:]
m = re.match(r'([0-9.]+)\s*(ps|ns|us|ms|s)$', dur)
sim_s = float(m.group(1)) * {'ps': 1e-12, 'ns': 1e-9, 'us': 1e-6, 'ms': 1e-3, 's': 1}[m.group(2)]
rows = {}
for label in labels:
    s = json.load(open(f'{tmp}/{label}/summary.json'))
    wall, rss_kb = open(f'{tmp}/{label}.time').read().split()
    rows[label] = dict(wall=float(wall), rss=int(rss_kb) / 1024, events=s['events'],
                       hops=s['packet_hops'], digest=s['digest'])
print(f"{'run':<7}{'wall s':>9}{'peak MiB':>10}{'events':>13}{'Mev/s':>8}{'packet-hops':>13}"
      f"{'Mhops/s':>9}{'ev/hop':>8}  digest")
for k, r in rows.items():
    print(f"{k:<7}{r['wall']:>9.2f}{r['rss']:>10.0f}{r['events']:>13}{r['events']/r['wall']/1e6:>8.2f}"
          f"{r['hops']:>13}{r['hops']/r['wall']/1e6:>9.3f}{r['events']/max(r['hops'],1):>8.2f}"
          f"  {r['digest']}")
t = rows['this']
print(f"targets: 1.5 M packet-hops/s (this: {t['hops']/t['wall']/1e6:.3f} M, "
      f"{t['hops']/t['wall']/1.5e6:.2f} of it); peak under 1.5 GB (this: {t['rss']:.0f} MiB)")
print(f"0.5 s simulated at this speed: {t['wall']*0.5/sim_s/60:.0f} min (target: under 60)")
if 'base' in rows:
    for a, b in (('this', 'base'), ('this2', 'base2')):
        same = 'same digest' if rows[a]['digest'] == rows[b]['digest'] else 'DIGESTS DIFFER'
        print(f"speed against IBEMU_BASE ({a}/{b}): {rows[b]['wall']/rows[a]['wall']:.2f}x ({same})")
PY

if [ "${INSTRUCTIONS:-0}" = 1 ]; then
  command -v valgrind >/dev/null || { echo "INSTRUCTIONS=1 needs valgrind (apt-get install valgrind)" >&2; exit 1; }
  # The caches are simulated as this project's machine has them (an Intel Xeon since stop 36: 48
  # KiB of L1 data, 12-way, and 2 MiB of L2; the figures of the stops before used valgrind's own L1
  # of that day's AMD EPYC and a 1 MiB L2): it gives no hardware counters, and an L2 miss (an L3
  # hit) costs more than many instructions. L2_BYTES sets another L2 (a power of two).
  L2_BYTES=${L2_BYTES:-2097152}
  count() {  # $1 = binary, $2 = duration: prints instructions, L1 and L2 misses, events, packet-hops
    local out="$TMP/ir-$2"
    local log
    log=$(valgrind --tool=cachegrind --cache-sim=yes --D1=49152,12,64 --LL="$L2_BYTES",16,64 \
      --cachegrind-out-file=/dev/null "$1" run "$SCEN" -q --no-plot --duration "$2" -o "$out" \
      2>&1 >/dev/null)
    local ir d1 ll
    ir=$(sed -n 's/.*I *refs: *//p' <<<"$log" | tr -d ,)
    d1=$(sed -n 's/.*D1  misses: *\([0-9,]*\).*/\1/p' <<<"$log" | tr -d ,)
    ll=$(sed -n 's/.*LLd misses: *\([0-9,]*\).*/\1/p' <<<"$log" | tr -d ,)
    [ -n "$ir" ] && [ -n "$ll" ] || { echo "engine_bench: cachegrind failed:" >&2; echo "$log" >&2; exit 1; }
    python3 -c "import json,sys; s=json.load(open('$out/summary.json')); print($ir, $d1, $ll, s['events'], s['packet_hops'])"
  }
  per_hop() {  # $1 = label, $2 = binary
    read -r i1 d1 l1 e1 h1 <<<"$(count "$2" 2us)"
    read -r i2 d2 l2 e2 h2 <<<"$(count "$2" 22us)"
    python3 -c "h = $h2 - $h1; print(f'instructions ($1): {($i2-$i1)/h:.0f} per packet-hop, {($i2-$i1)/($e2-$e1):.0f} per event, {($e2-$e1)/h:.2f} events per packet-hop; data misses per packet-hop: L1 {($d2-$d1)/h:.1f}, L2 ($L2_BYTES bytes) {($l2-$l1)/h:.1f} (2-22 us)')"
  }
  per_hop this "$IBEMU"
  if [ -n "${IBEMU_BASE:-}" ]; then per_hop base "$IBEMU_BASE"; fi
fi
