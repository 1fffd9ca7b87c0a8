#!/usr/bin/env python3
"""Plots and figures for docs/experiments/selftuned.md from the runs of
scripts/selftuned-experiments.sh.

  scripts/selftuned_plot.py RESULTS_DIR OUT_PREFIX LOAD...
      Uniform load sweep (RESULTS_DIR/uniform-SCHEME-LOAD): delivered throughput and mean packet
      latency against the offered load, per scheme (the paper's Fig. 3 and 5), as fractions of
      the 1 GB/s link per host; OUT_PREFIX-uniform-throughput.png and -uniform-latency.png.
      Bursty load (RESULTS_DIR/bursty-SCHEME): delivered throughput over time (Fig. 6, 7) in
      OUT_PREFIX-bursty.png, and the mean packet latency of every packet (source queueing
      included) per scheme. Prints both tables.
"""
import csv
import json
import subprocess
import sys

HOSTS = 256
LINK = 8.0  # Gbit/s of data per host link (4x SDR)
UNIFORM = [("base", "Base"), ("alo", "ALO"), ("tune", "Tune"), ("static164", "static 164 (8 %)"),
           ("static33", "static 33 (1.6 %)")]
BURSTY = [("base", "Base"), ("alo", "ALO"), ("tune", "Tune")]


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def summary(d):
    return json.load(open(f"{d}/summary.json"))


def mean_latency(j):
    n = sum(f["rx_packets"] for f in j["flows"])
    return sum(f["rx_packets"] * f["latency_mean_us"] for f in j["flows"]) / max(1, n), n


def main():
    results, prefix, loads = sys.argv[1], sys.argv[2], sys.argv[3:]
    print("== uniform load: delivered (fraction of the link per host) / mean latency (us) ==")
    print(f"{'load':>6}" + "".join(f"{t:>22}" for _, t in UNIFORM))
    table = {}
    for load in loads:
        row = []
        for s, _ in UNIFORM:
            j = summary(f"{results}/uniform-{s}-{load}")
            thr = sum(f["rx_gbps"] for f in j["flows"]) / (HOSTS * LINK)
            lat, _ = mean_latency(j)
            table[(s, load)] = (thr, lat)
            row.append(f"{thr:11.3f} {lat:9.1f}")
        print(f"{load:>6}" + "".join(f"{r:>22}" for r in row))
    for kind, col, ylabel, logy in (("throughput", 0, "delivered (fraction of the link)", False),
                                    ("latency", 1, "mean packet latency (us)", True)):
        dat = []
        for s, title in UNIFORM:
            path = f"{results}/uniform-{s}.{kind}.dat"
            with open(path, "w") as f:
                for load in loads:
                    f.write(f"{load} {table[(s, load)][col]}\n")
            dat.append(f"'{path}' using 1:2 with linespoints lw 2 title '{title}'")
        gnuplot(f"""set terminal pngcairo size 1000,560 noenhanced
set output '{prefix}-uniform-{kind}.png'
set title 'Self-tuned throttling, 16x16 torus, uniform traffic: {ylabel}'
set xlabel 'offered load (fraction of the link per host)'
set ylabel '{ylabel}'
set grid
set key below
{'set logscale y' if logy else 'set yrange [0:*]'}
plot {', '.join(dat)}
""")
    print("== bursty load: mean latency of every packet (us), packets delivered ==")
    dat = []
    for s, title in BURSTY:
        d = f"{results}/bursty-{s}"
        lat, n = mean_latency(summary(d))
        print(f"{title:8}{lat:10.1f}{n:10}")
        rows = list(csv.DictReader(open(f"{d}/flows.csv")))
        path = f"{d}/total.dat"
        with open(path, "w") as f:
            for r in rows:
                tot = sum(float(v) for k, v in r.items() if k.endswith("_rx_gbps"))
                f.write(f"{float(r['time_ms']) * 1000} {tot / (HOSTS * LINK)}\n")
        dat.append(f"'{path}' using 1:2 with lines lw 2 title '{title}'")
    gnuplot(f"""set terminal pngcairo size 1000,560 noenhanced
set output '{prefix}-bursty.png'
set title 'Self-tuned throttling, 16x16 torus, bursty load: delivered throughput'
set xlabel 'virtual time (us); bursts at 20, 120 and 220 us'
set ylabel 'delivered (fraction of the link per host)'
set grid
set key below
set yrange [0:*]
set xrange [0:700]
plot {', '.join(dat)}
""")


if __name__ == "__main__":
    main()
