#!/usr/bin/env bash
# Issue 13, must-show 3: the thesis test bed (scenario 1) in one process, in three processes and
# with one process per device, side by side in one run. Each figure is the median of RUNS runs
# (default 3), the modes taking turns: the wall time of the whole `ibemu run` command (start to
# exit, as the user waits for it), the time the run itself reports, the batches that crossed
# between processes, and the digest, which must be the same in every mode.
#   bench/per_device_bench.sh [SCENARIO]        (RUNS=n in the environment)
# Needs a build (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${IBEMU_BUILD_DIR:-build}/emulator/ibemu
SCEN=${1:-configs/scenarios/testbed-scenario1.yaml}
RUNS=${RUNS:-3}
WORK=$(mktemp -d /tmp/ibemu-per-device-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
run() {  # label, extra arguments
  local label=$1 t0
  shift
  t0=$(date +%s.%N)
  "$B" run "$SCEN" -q --no-plot -o "$WORK/$label" "$@" > "$WORK/$label.out"
  echo "$(date +%s.%N) - $t0" | bc >> "$WORK/$label.walls"
  cp "$WORK/$label/summary.json" "$WORK/$label.$(wc -l < "$WORK/$label.walls").json"
  grep -o '[0-9]* batches' "$WORK/$label.out" | cut -d' ' -f1 >> "$WORK/$label.batches" || true
}
echo "$SCEN: $RUNS runs of each mode, taking turns; medians"
for ((r = 0; r < RUNS; r++)); do
  run one
  run three --partitions 3
  run per-device --per-device
done
python3 - "$WORK" <<'PY'
import json, statistics, sys, glob
w = sys.argv[1]
rows = {}
for label in ('one', 'three', 'per-device'):
    walls = [float(x) for x in open(f'{w}/{label}.walls').read().split()]
    sums = [json.load(open(f)) for f in sorted(glob.glob(f'{w}/{label}.*.json'))]
    try:
        batches = [int(x) for x in open(f'{w}/{label}.batches').read().split()]
    except FileNotFoundError:
        batches = []
    rows[label] = dict(wall=statistics.median(walls), lo=min(walls), hi=max(walls),
                       run=statistics.median(s['wall_seconds'] for s in sums),
                       batches=int(statistics.median(batches)) if batches else 0,
                       digests=sorted({s['digest'] for s in sums}), procs=sums[0].get('partitions', 1))
one = rows['one']['wall']
print(f"{'mode':<12}{'processes':>10}{'command s':>11}{'(min-max)':>16}{'run s':>9}{'batches':>10}{'x one':>8}  digest")
for k, r in rows.items():
    print(f"{k:<12}{r['procs']:>10}{r['wall']:>11.3f}{'(%.3f-%.3f)' % (r['lo'], r['hi']):>16}{r['run']:>9.3f}"
          f"{r['batches']:>10}{r['wall'] / one:>8.1f}  {','.join(r['digests'])}")
same = len({d for r in rows.values() for d in r['digests']}) == 1
print(f"per device: {rows['per-device']['wall'] / one:.1f} times the one-process command "
      f"(must-show 3 of issue 13: at most 50); digests {'the same' if same else 'DIFFER'}")
sys.exit(0 if same else 1)
PY
