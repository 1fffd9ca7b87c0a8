#!/usr/bin/env bash
# What each congestion-control mechanism costs the simulator, side by side in one run: the
# 648-node fat tree at 80 % load with a tenth of the traffic to two hot spots (so that switches
# mark and sources throttle), as configs/scenarios/bench/fat-tree-648-hotspot-cc-off.yaml, with
# each mechanism in turn. Not a test: it prints figures for docs/performance.md.
#
#   bench/cc_bench.sh [DURATION]      default 3ms
#
# Per mechanism: wall time, events and packet-hops, wall nanoseconds per packet-hop, the ratio to
# CC off, the delivered load, and the packet-hops that carried FECN (a mechanism that marks
# nothing here measures only its bookkeeping).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-3ms}
IBEMU=${IBEMU:-build/emulator/ibemu}
B=configs/scenarios/bench
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The CC-off scenario with its congestion_control section replaced (name, then the section's
# lines, indented as in the file), and optionally its fabric lines: "old=>new;old=>new".
variant() {  # variant NAME SECTION [EDITS]
  python3 - "$B/fat-tree-648-hotspot-cc-off.yaml" "$1" "$2" "${3:-}" > "$TMP/$1.yaml" <<'PY'
import sys
src, name, section, edits = sys.argv[1:5]
text = open(src).read()
for e in filter(None, edits.split(";")):
    old, new = e.split("=>")
    assert old in text, old
    text = text.replace(old, new)
a = text.index("congestion_control:")
b = text.index("traffic:")
print(text[:a] + "congestion_control:\n" + section + text[b:], end="")
PY
}
variant none "  mechanism: none
"
cp "$B/fat-tree-648-hotspot-cc-on.yaml" "$TMP/ib.yaml"
# Santos et al.: proposed input-buffer marking at a buffer of one packet's room, window 1, LIPD.
variant santos "  mechanism: santos
  parameters: {trigger: proposed, window: 1, rate: lipd}
"
# MVCM: MVPM marking (on this input-queued switch the output's queue is what the inputs hold for
# it), window 2 and waiting slots; k and n of the fat tree's 36-port switches and 2 levels.
variant mvcm "  mechanism: mvcm
  parameters: {k: 36, n: 2}
"
# Self-tuned global throttling: the side band's gather every g (default two packet times at
# 4x SDR's 1 GB/s: 564 ns), hill climbing, every host's gate.
variant selftuned "  mechanism: selftuned
  parameters: {policy: tune}
"
# The papers' VOQsw (buffer shares per output, credits per queue through look-ahead classes):
# no mechanism, the queuing policy alone, beside the default VOQsw of the "none" row. Each of a
# 36-port switch's queues must hold a 2 KB packet (33 blocks): 76032 bytes per VL.
variant voqsw-static "  mechanism: none
" "  switch:
    latency: 100ns=>  switch:
    latency: 100ns
    queuing: queuing.voqsw-static;vl_buffer_bytes: 65536=>vl_buffer_bytes: 76032"
# DBBM-4Q and DDBBM-5Q in the IB form: a VL per queue chosen by the source's SL, the port's
# 64 KB divided among the VLs; DDBBM's destinations detect and send notices (GMPs).
variant dbbm "  mechanism: dbbm
  parameters: {queues: 4}
" "data_vls: 1=>data_vls: 4;vl_buffer_bytes: 65536=>vl_buffer_bytes: 16384"
variant ddbbm "  mechanism: ddbbm
  parameters: {queues: 4}
" "data_vls: 1=>data_vls: 8;vl_buffer_bytes: 65536=>vl_buffer_bytes: 13056"
# The CC-on scenario's CA settings (Paper III's CCT and timer), for the mechanisms whose hosts
# run IB CC's throttling behind their own switches' marking.
CAS=$(python3 - "$B/fat-tree-648-hotspot-cc-on.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
lines = text[text.index("  ib:"):text.index("traffic:")].splitlines()
print("\n".join(l for l in lines if "cc_sw_" not in l))
PY
)
# FBICM and CCFIT on the VOQsw switches (a normal queue per output, 2 CFQs), EcoCC and HFDI on
# switches with a read port per queue.
variant fbicm "  mechanism: fbicm
"
variant ccfit "  mechanism: ccfit
  parameters: {cct_base_ns: 1}
$CAS
"
variant hfdi "  mechanism: hfdi
" "  switch:
    latency: 100ns=>  switch:
    latency: 100ns
    read_ports: queue"
variant ecocc "  mechanism: ecocc
  parameters: {cct_base_ns: 1}
$CAS
" "  switch:
    latency: 100ns=>  switch:
    latency: 100ns
    read_ports: queue"
MECHS=(none ib santos mvcm selftuned voqsw-static dbbm ddbbm fbicm ccfit hfdi ecocc)

echo "ibemu CC benchmark: 648-node fat tree, 4x QDR, 80 % load, 10 % to two hot spots, $DURATION simulated"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for m in "${MECHS[@]}"; do
  /usr/bin/time -f "%e" -o "$TMP/$m.time" "$IBEMU" run "$TMP/$m.yaml" -q --no-plot \
    --duration "$DURATION" -o "$TMP/$m" > "$TMP/$m.out"
done
python3 - "$TMP" "${MECHS[@]}" <<'PY'
import json, sys
tmp, mechs = sys.argv[1], sys.argv[2:]
rows = {}
for m in mechs:
    s = json.load(open(f"{tmp}/{m}/summary.json"))
    wall = float(open(f"{tmp}/{m}.time").read().split()[0])
    rows[m] = dict(wall=wall, events=s["events"], hops=s["packet_hops"],
                   gbps=sum(f["rx_gbps"] for f in s["flows"]),
                   fecn=sum(p.get("tx_fecn", 0) for p in s["ports"]))
base = rows["none"]["wall"] / rows["none"]["hops"]
print(f"{'mechanism':<11}{'wall s':>8}{'events':>12}{'packet-hops':>13}{'ns/hop':>8}{'x off':>7}"
      f"{'delivered Tb/s':>16}{'FECN hops':>11}")
for m, r in rows.items():
    per = r["wall"] / r["hops"]
    print(f"{m:<11}{r['wall']:>8.2f}{r['events']:>12}{r['hops']:>13}{per * 1e9:>8.0f}{per / base:>7.2f}"
          f"{r['gbps'] / 1000:>16.2f}{r['fecn']:>11}")
PY
