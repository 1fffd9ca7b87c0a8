#!/usr/bin/env python3
"""Plots and figures for docs/experiments/mvcm.md from the runs of scripts/mvcm-experiments.sh.

  scripts/mvcm_plot.py RESULTS_DIR FLY OUT_PREFIX
      For the S-A1 runs RESULTS_DIR/FLY-{none,santos,ib,mvcm}: the largest cold-flow latency per
      0.1 ms over time (the paper's Fig. 5a and 11, log scale), the hot-spot link's use over time
      (Fig. 6: H1's link on the wire, 282 bytes per 256 of payload, of 1 GB/s) and the cold
      flows' delivered rate (Fig. 5b). Writes OUT_PREFIX-latency.png, -hotlink.png and
      -throughput.png, and prints a table: worst cold latency, mean hot-link use while the hot
      spot lasts, marked cold and hot packets (FECN/MB on arrival).
  scripts/mvcm_plot.py RESULTS_DIR FLY --ablations
      The same table for the ablation runs RESULTS_DIR/FLY-mvcm-* beside MVCM (notes A.2.7).
"""
import csv
import json
import subprocess
import sys

ABLATIONS = [("mvcm", "MVCM"), ("mvcm-static1", "V1 window 1"), ("mvcm-static2", "V1 window 2"),
             ("mvcm-static5", "V1 window 5"), ("mvcm-validated-ib", "V2 IB on VB"),
             ("mvcm-pure-ipm", "V3 pure IPM"), ("mvcm-no-warm", "V4 no warm"),
             ("mvcm-no-cap", "V5 no cap")]
SCHEMES = [("none", "no CC"), ("santos", "Santos (LIPD)"), ("ib", "Pfister (IB CC)"),
           ("mvcm", "MVCM")]
LINK = 8.0  # Gbit/s of data on 4x SDR


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def series(results, fly, scheme):
    d = f"{results}/{fly}-{scheme}"
    flows = list(csv.DictReader(open(f"{d}/flows.csv")))
    lat = list(csv.DictReader(open(f"{d}/flow_latency.csv")))
    summary = json.load(open(f"{d}/summary.json"))
    t = [float(r["time_ms"]) for r in flows]
    hot = [(float(r["hot_rx_gbps"]) + float(r["to_hs_rx_gbps"])) / LINK * 282 / 256 for r in flows]
    cold = [float(r["cold_rx_gbps"]) for r in flows]
    cmax = [float(r["cold_lat_max_us"]) for r in lat]
    return d, t, hot, cold, cmax, {f["name"]: f for f in summary["flows"]}


def table(data, schemes):
    print(f"{'scheme':18}{'cold max us':>12}{'hot link':>10}{'cold marked':>13}{'hot marked':>12}"
          f"{'hot p50 us':>12}")
    for s, title in schemes:
        _, t, hot, _, cmax, fl = data[s]
        busy = [i for i, u in enumerate(hot) if u > 0.5]
        seg = hot[7:busy[-1]] if busy else [0]
        mark = lambda f: 100.0 * fl[f]["rx_fecn"] / max(1, fl[f]["rx_packets"])
        print(f"{title:18}{max(cmax):12.1f}{sum(seg) / len(seg):10.3f}"
              f"{mark('cold'):12.2f}%{mark('hot'):11.2f}%{fl['hot']['latency_p50_us']:12.1f}")


def main():
    results, fly, prefix = sys.argv[1:4]
    if prefix == "--ablations":
        table({s: series(results, fly, s) for s, _ in ABLATIONS}, ABLATIONS)
        return
    data = {s: series(results, fly, s) for s, _ in SCHEMES}
    table(data, SCHEMES)
    for kind, ylabel, col, logy in (("latency", "largest cold-flow latency (us)", 4, True),
                                    ("hotlink", "hot-spot link use", 2, False),
                                    ("throughput", "cold flows delivered (Gbit/s)", 3, False)):
        lines = []
        dat = []
        for s, title in SCHEMES:
            d, t, *_ = data[s]
            path = f"{d}/{kind}.dat"
            with open(path, "w") as f:
                for i, x in enumerate(data[s][col]):
                    f.write(f"{t[i]} {x}\n")
            dat.append(f"'{path}' using 1:2 with lines lw 2 title '{title}'")
        gnuplot(f"""set terminal pngcairo size 1000,560 noenhanced
set output '{prefix}-{kind}.png'
set title 'MVCM S-A1, 4-ary {fly[0]}-fly, Table 3 traffic: {ylabel}'
set xlabel 'virtual time (ms); hot-spot sources inject from 0.5 ms'
set ylabel '{ylabel}'
set grid
set key below
{'set logscale y' if logy else 'set yrange [0:*]'}
plot {', '.join(dat)}
""")


if __name__ == "__main__":
    main()
