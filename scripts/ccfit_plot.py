#!/usr/bin/env python3
"""Figures and plots for docs/experiments/ccfit.md from the runs of scripts/ccfit-experiments.sh.

  scripts/ccfit_plot.py RESULTS_DIR PLOTS_DIR

For case #4 with 1, 4 and 6 congestion trees: the network's delivered payload over time per
scheme (Paper V's Fig. 8), written to PLOTS_DIR/ccfit-case4-<n>tree.png, and a table of the mean
throughput before (0.5-1 ms), during (1-2 ms) and after (2-4 ms) the hot spots.
"""
import csv
import subprocess
import sys

SCHEMES = [("1q", "1Q"), ("ith", "ITh (IB CC, VOQsw)"), ("fbicm", "FBICM"), ("ccfit", "CCFIT"),
           ("fbicm-voq", "FBICM on VOQsw"), ("ccfit-voq", "CCFIT on VOQsw"),
           ("voqnet", "VOQnet")]


def series(results, name):
    rows = list(csv.DictReader(open(f"{results}/{name}/flows.csv")))
    cols = [c for c in rows[0] if c.endswith("_rx_gbps")]
    return [float(r["time_ms"]) for r in rows], [sum(float(r[c]) for c in cols) for r in rows]


def mean(t, v, a, b):
    x = [y for s, y in zip(t, v) if a < s <= b + 1e-9]
    return sum(x) / len(x)


def main():
    results, plots = sys.argv[1:3]
    print(f"{'trees':6}{'scheme':22}{'before':>8}{'during':>8}{'after':>8}{'min':>7}   Gbit/s")
    for trees in (1, 4, 6):
        data = {}
        for s, title in SCHEMES:
            t, v = series(results, f"case4-{trees}tree-{s}")
            data[s] = (t, v)
            print(f"{trees:<6}{title:22}{mean(t, v, 0.5, 1):8.0f}{mean(t, v, 1, 2):8.0f}"
                  f"{mean(t, v, 2, 4):8.0f}{min(v[10:]):7.0f}")
            with open(f"{results}/ccfit-case4-{trees}tree-{s}.dat", "w") as f:
                for a, b in zip(t, v):
                    f.write(f"{a} {b}\n")
        plot = ", ".join(f'"{results}/ccfit-case4-{trees}tree-{s}.dat" using 1:2 with lines lw 2 '
                         f'title "{title}"' for s, title in SCHEMES)
        subprocess.run(["gnuplot"], check=True, input=f"""set terminal pngcairo size 900,450
set output "{plots}/ccfit-case4-{trees}tree.png"
set title "Paper V case #4, {trees} congestion tree(s) from 1 to 2 ms: network throughput"
set xlabel "time (ms)"
set ylabel "delivered payload, Gbit/s"
set yrange [0:*]
set key outside right
set grid
plot {plot}
""".encode())


if __name__ == "__main__":
    main()
