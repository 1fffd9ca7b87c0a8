#!/usr/bin/env python3
"""Figures and plots for docs/experiments/ccfit.md from the runs of scripts/ccfit-experiments.sh.

  scripts/ccfit_plot.py RESULTS_DIR PLOTS_DIR

For case #4 with 1, 4 and 6 congestion trees: the network's delivered payload over time per
scheme (Paper V's Fig. 8), written to PLOTS_DIR/ccfit-case4-<n>tree.png, and a table of the mean
throughput before (0.5-1 ms), during (1-2 ms) and after (2-4 ms) the hot spots.
"""
import sys

from hotspot_experiment import mean, plot, series

SCHEMES = [("1q", "1Q"), ("ith", "ITh (IB CC, VOQsw)"), ("fbicm", "FBICM"), ("ccfit", "CCFIT"),
           ("fbicm-voq", "FBICM on VOQsw"), ("ccfit-voq", "CCFIT on VOQsw"),
           ("voqnet", "VOQnet")]


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
        plot(results, f"{plots}/ccfit-case4-{trees}tree.png",
             f"Paper V case #4, {trees} congestion tree(s) from 1 to 2 ms: network throughput",
             [(f"ccfit-case4-{trees}tree-{s}", data[s], title) for s, title in SCHEMES])


if __name__ == "__main__":
    main()
