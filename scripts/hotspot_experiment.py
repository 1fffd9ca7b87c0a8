"""Shared by the hot-spot experiments of the thesis's Papers V and VI (ccfit_*.py, ecocc_*.py):
the traffic of a scenario, the network's throughput over time from a run, and its plot."""
import csv
import subprocess


def hosts(ids):
    return "[" + ", ".join(f"H{i}" for i in ids) + "]"


def ib_section(ccti_timer, cct, threshold=None):
    """The congestion_control.ib lines: every CA QP-based on SL 0 with this CCTI_Timer,
    CCTI_Increase 1 and the CCT (a list of multipliers, shift 0); with a threshold, every switch
    port marks every packet above it (IB CC's own switches, for ITh)."""
    text = f"""  ib:
    cc_ca_cong_setting_port_control: 0
    cc_ca_cong_setting_control_map: 0x1
    cc_ca_cong_setting_ccti_timer: {{0: {ccti_timer}}}
    cc_ca_cong_setting_ccti_increase: {{0: 1}}
    cc_ca_cong_setting_ccti_min: {{0: 0}}
"""
    if threshold is not None:
        text += f"""    cc_sw_cong_setting_control_map: 0xf
    cc_sw_cong_setting_victim_mask: "0x{'f' * 64}"
    cc_sw_cong_setting_threshold: {threshold}
    cc_sw_cong_setting_packet_size: 0
    cc_sw_cong_setting_marking_rate: 0
"""
    entries = ",".join(f"0:{m}" for m in cct)
    return text + f'    cc_cct: "{entries}"'


def traffic(uniform, hot, spots, packet):
    """Uniform sources Poisson at the link's rate into a queue per destination, so a stopped or
    throttled destination holds up no other (the IA's AdVOQs); hot sources dealt out in turn to
    the hot spots, always backlogged from 1 to 2 ms, so they stop with nothing left to send."""
    common = f"message_bytes: {packet}, transport: uc"
    text = f"""traffic:
  - {{name: uniform, pattern: uniform, sources: {hosts(uniform)}, load: 1.0, arrival: poisson,
     {common}}}
"""
    for i, h in enumerate(spots):
        text += f"""  - {{name: hot{i + 1}, pattern: incast, dst: H{h}, sources: {hosts(hot[i::len(spots)])},
     start: 1ms, stop: 2ms, arrival: saturate, {common}}}
"""
    return text + """run:
  duration: 4ms
  interval: 50us
"""


def series(results, name):
    """The run's time axis (ms) and the whole network's delivered payload (Gbit/s) per bin."""
    rows = list(csv.DictReader(open(f"{results}/{name}/flows.csv")))
    cols = [c for c in rows[0] if c.endswith("_rx_gbps")]
    return [float(r["time_ms"]) for r in rows], [sum(float(r[c]) for c in cols) for r in rows]


def mean(t, v, a, b):
    x = [y for s, y in zip(t, v) if a < s <= b + 1e-9]
    return sum(x) / len(x)


def plot(results, png, title, curves):
    """curves: (name of the run's series file, (t, v), title) each; writes RESULTS/<name>.dat."""
    parts = []
    for name, (t, v), label in curves:
        with open(f"{results}/{name}.dat", "w") as f:
            for a, b in zip(t, v):
                f.write(f"{a} {b}\n")
        parts.append(f'"{results}/{name}.dat" using 1:2 with lines lw 2 title "{label}"')
    subprocess.run(["gnuplot"], check=True, input=f"""set terminal pngcairo size 900,450
set output "{png}"
set title "{title}"
set xlabel "time (ms)"
set ylabel "delivered payload, Gbit/s"
set yrange [0:*]
set key outside right
set grid
plot {", ".join(parts)}
""".encode())
