#!/usr/bin/env python3
"""Figures and plots for docs/experiments/ecocc.md from the runs of scripts/ecocc-experiments.sh.

  scripts/ecocc_plot.py RESULTS_DIR PLOTS_DIR

For configurations #1 and #2 under traffic pattern #2: the network's delivered payload over time
per scheme (Paper VI's Fig. 7 b and e), written to PLOTS_DIR/ecocc-conf<n>.png; the mean
throughput before (0.5-1 ms) and from the hot spots' start to 1 ms after their end (1-3 ms); and
the gain of EcoCC and of CCFIT over each other scheme in that window beside Table 3's.
"""
import sys

from hotspot_experiment import mean, plot, series

SCHEMES = [("1vl", "1VL"), ("ith", "IB-ITh"), ("hfdi", "HFDI"), ("ecocc", "EcoCC"),
           ("ccfit", "CCFIT (1 read port)"), ("voqnet", "VOQnet")]
# Table 3 (L7114-L7149): average gain over 1VL, IB-ITh, HFDI, VOQnet, per configuration.
PAPER = {"ecocc": {1: [58, 55, 29, 0], 2: [83, 75, 43, 0]},
         "ccfit": {1: [67, 46, 10, -8], 2: [60, 51, 20, -33]}}


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
        plot(results, f"{plots}/ecocc-conf{conf}.png",
             f"Paper VI configuration #{conf}, traffic pattern #2 (4 hot spots, 1-2 ms)",
             [(f"ecocc-conf{conf}-{s}", data[s], title) for s, title in SCHEMES])


if __name__ == "__main__":
    main()
