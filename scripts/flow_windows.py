#!/usr/bin/env python3
"""Per-flow statistics from a run's flows.csv, for the tables in docs/experiments/.

  scripts/flow_windows.py RESULTS/flows.csv FROM_MS TO_MS [--flows F2,F3,...] [--window MS]

Prints, for each flow, the mean and the standard deviation (population) of its delivered rate
over the run's bins in (FROM_MS, TO_MS], in Mbit/s, and the mean and SD over all those flows'
bins together. With --window, it also prints, for each window of that many ms from FROM_MS, each
flow's mean in Gbit/s and max/min across the flows.
"""
import argparse
import csv
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("from_ms", type=float)
    ap.add_argument("to_ms", type=float)
    ap.add_argument("--flows", help="comma-separated flow names (default: all)")
    ap.add_argument("--window", type=float, help="window length in ms for max/min")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    names = [c[: -len("_rx_gbps")] for c in rows[0] if c.endswith("_rx_gbps")]
    if a.flows:
        names = a.flows.split(",")
    sel = [r for r in rows if a.from_ms < float(r["time_ms"]) <= a.to_ms]
    every = []
    for n in names:
        v = [float(r[n + "_rx_gbps"]) * 1000 for r in sel]
        every += v
        print(f"{n}: mean {statistics.mean(v):.0f} Mbit/s, SD {statistics.pstdev(v):.0f}")
    print(f"all: mean {statistics.mean(every):.0f} Mbit/s, SD {statistics.pstdev(every):.0f}")
    if a.window:
        t = a.from_ms
        while t < a.to_ms:
            w = [r for r in sel if t < float(r["time_ms"]) <= t + a.window]
            m = [statistics.mean(float(r[n + "_rx_gbps"]) for r in w) for n in names]
            print(f"{t:g}-{t + a.window:g} ms: " + " ".join(f"{x:.2f}" for x in m) +
                  f"  max/min {max(m) / min(m):.2f}")
            t += a.window


if __name__ == "__main__":
    main()
