#!/usr/bin/env bash
# Runs a scenario once per switch latency and prints each flow's delivered Gbit/s over the run's
# measurement window, and each flow's mean over the sweep. Constant-rate sources over equal links
# lock a congestion-control mechanism's episodes into one phase of the timing, so a result that
# holds at one latency only says little about the mechanism (docs/experiments/testbed-ib-cc.md).
#
#   scripts/latency_sweep.sh SCENARIO NS...
#   scripts/latency_sweep.sh configs/scenarios/testbed-scenario2-cc-on.yaml 95 96 97 98 99 100 \
#     101 102 103 104 105 110 120
#
# EDIT: a sed expression applied to the scenario too (e.g. 's/hysteresis_blocks: 33/hysteresis_blocks: 0/').
# WINDOW="FROM TO": also print the max/min of the flows' means over (FROM, TO] ms
#   (scripts/flow_windows.py), for the flows in FLOWS (comma-separated; default all).
# IBEMU: the binary (default build/emulator/ibemu), e.g. another build to compare models.
set -euo pipefail
cd "$(dirname "$0")/.."
IBEMU=${IBEMU:-build/emulator/ibemu}
SCEN=$1
shift
# The edited copy sits beside the scenario, so its relative topology path still resolves.
COPY=$(mktemp "$(dirname "$SCEN")/.latency-sweep.XXXXXX.yaml")
OUT=$(mktemp -d)
trap 'rm -rf "$COPY" "$OUT"' EXIT
grep -Eq '(^|[ {])latency: ' "$SCEN" || {
  echo "latency_sweep: $SCEN sets no switch latency to edit" >&2
  exit 1
}
for ns in "$@"; do
  sed -E -e "s/(^|[ {])latency: [0-9.]+ *[a-z]+/\\1latency: ${ns}ns/" -e "${EDIT:-}" "$SCEN" > "$COPY"
  "$IBEMU" run "$COPY" -q --no-plot -o "$OUT/$ns" > /dev/null
  if [ -n "${WINDOW:-}" ]; then
    read -r from to <<< "$WINDOW"
    w=$(python3 scripts/flow_windows.py "$OUT/$ns/flows.csv" "$from" "$to" ${FLOWS:+--flows "$FLOWS"} \
      --window "$((to - from))" | awk '/max\/min/ {print $NF}')
    echo "$ns ns: max/min of the flows over $from-$to ms: $w"
  fi
done
python3 - "$OUT" "$@" <<'PY'
import json, sys
out, lats = sys.argv[1], sys.argv[2:]
runs = {ns: {f['name']: f['rx_gbps'] for f in json.load(open(f'{out}/{ns}/summary.json'))['flows']}
        for ns in lats}
names = list(runs[lats[0]])
print('latency_ns ' + ' '.join(f'{n:>8}' for n in names) + '   min/mean')
for ns, r in runs.items():
    v = [r[n] for n in names]
    print(f'{ns:>10} ' + ' '.join(f'{x:8.2f}' for x in v) + f'   {min(v) / (sum(v) / len(v)):.3f}')
means = [sum(runs[ns][n] for ns in lats) / len(lats) for n in names]
m = sum(means) / len(means)
print(f'{"mean":>10} ' + ' '.join(f'{x:8.2f}' for x in means) + '   deviation ' +
      ' '.join(f'{100 * (x / m - 1):+.1f}%' for x in means))
PY
