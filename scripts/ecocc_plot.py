#!/usr/bin/env python3
"""Figures and plots for docs/experiments/ecocc.md from the runs of scripts/ecocc-experiments.sh.

  scripts/ecocc_plot.py RESULTS_DIR PLOTS_DIR

For configurations #1 and #2 under traffic pattern #2: the network's delivered payload over time
per scheme (Paper VI's Fig. 7 b and e), written to PLOTS_DIR/ecocc-conf<n>.png; the mean
throughput before (0.5-1 ms) and from the hot spots' start to 1 ms after their end (1-3 ms); and
the gain of EcoCC and of CCFIT over each other scheme in that window beside Table 3's.
"""
import csv
import subprocess
import sys

SCHEMES = [("1vl", "1VL"), ("ith", "IB-ITh"), ("hfdi", "HFDI"), ("ecocc", "EcoCC"),
           ("ccfit", "CCFIT (1 read port)"), ("voqnet", "VOQnet")]
# Table 3 (L7114-L7149): average gain over 1VL, IB-ITh, HFDI, VOQnet, per configuration.
PAPER = {"ecocc": {1: [58, 55, 29, 0], 2: [83, 75, 43, 0]},
         "ccfit": {1: [67, 46, 10, -8], 2: [60, 51, 20, -33]}}


def series(results, name):
    rows = list(csv.DictReader(open(f"{results}/{name}/flows.csv")))
    cols = [c for c in rows[0] if c.endswith("_rx_gbps")]
    return [float(r["time_ms"]) for r in rows], [sum(float(r[c]) for c in cols) for r in rows]


def mean(t, v, a, b):
    x = [y for s, y in zip(t, v) if a < s <= b + 1e-9]
    return sum(x) / len(x)


def main():
    results, plots = sys.argv[1:3]
    for conf in (1, 2):
        data = {s: series(results, f"conf{conf}-p2-{s}") for s, _ in SCHEMES}
        window = {s: mean(*data[s], 1, 3) for s, _ in SCHEMES}
        print(f"configuration #{conf}: Gbit/s before (0.5-1 ms), 1-3 ms, lowest bin")
        for s, title in SCHEMES:
            t, v = data[s]
            print(f"  {title:22}{mean(t, v, 0.5, 1):8.0f}{window[s]:8.0f}{min(v[10:]):8.0f}")
        for m in ("ecocc", "ccfit"):
            gains = [100 * (window[m] / window[b] - 1) for b in ("1vl", "ith", "hfdi", "voqnet")]
            print(f"  gain of {m} over 1VL, IB-ITh, HFDI, VOQnet: "
                  + ", ".join(f"{g:+.0f} %" for g in gains)
                  + "   (paper: " + ", ".join(f"{p:+d} %" for p in PAPER[m][conf]) + ")")
        for s, _ in SCHEMES:
            with open(f"{results}/ecocc-conf{conf}-{s}.dat", "w") as f:
                for a, b in zip(*data[s]):
                    f.write(f"{a} {b}\n")
        plot = ", ".join(f'"{results}/ecocc-conf{conf}-{s}.dat" using 1:2 with lines lw 2 '
                         f'title "{title}"' for s, title in SCHEMES)
        subprocess.run(["gnuplot"], check=True, input=f"""set terminal pngcairo size 900,450
set output "{plots}/ecocc-conf{conf}.png"
set title "Paper VI configuration #{conf}, traffic pattern #2 (4 hot spots, 1-2 ms)"
set xlabel "time (ms)"
set ylabel "delivered payload, Gbit/s"
set yrange [0:*]
set key outside right
set grid
plot {plot}
""".encode())


if __name__ == "__main__":
    main()
