#!/usr/bin/env python3
"""Figures and plots for docs/experiments/ecocc.md from the runs of scripts/ecocc-experiments.sh.

  scripts/ecocc_plot.py RESULTS_DIR PLOTS_DIR

For configurations #1 and #2 under traffic pattern #2: the network's delivered payload over time
per scheme (Paper VI's Fig. 7 b and e), written to PLOTS_DIR/ecocc-conf<n>.png; the mean
throughput before (0.5-1 ms) and from the hot spots' start to 1 ms after their end (1-3 ms); and
the gain of EcoCC and of CCFIT over each other scheme in that window beside Table 3's. Then
patterns #1 and #3 the same way (Fig. 7 a, c, d, f), to PLOTS_DIR/ecocc-conf<n>-p<m>.png.
With --large, configuration #3 under pattern #2 (Fig. 7 h), to PLOTS_DIR/ecocc-conf3.png.
"""
import sys

from hotspot_experiment import mean, plot, series

SCHEMES = [("1vl", "1VL"), ("ith", "IB-ITh"), ("hfdi", "HFDI"), ("ecocc", "EcoCC"),
           ("ccfit", "CCFIT (1 read port)"), ("voqnet", "VOQnet")]
# Table 3 (L7114-L7149): average gain over 1VL, IB-ITh, HFDI, VOQnet, per configuration.
PAPER = {"ecocc": {1: [58, 55, 29, 0], 2: [83, 75, 43, 0]},
         "ccfit": {1: [67, 46, 10, -8], 2: [60, 51, 20, -33]}}


def report(results, plots, conf, pattern, schemes, png):
    run = f"conf{conf}-p{pattern}"
    data = {s: series(results, f"{run}-{s}") for s, _ in schemes}
    window = {s: mean(*data[s], 1, 3) for s, _ in schemes}
    print(f"configuration #{conf}, pattern #{pattern}: Gbit/s before (0.5-1 ms), 1-3 ms, "
          "lowest bin")
    for s, title in schemes:
        t, v = data[s]
        print(f"  {title:22}{mean(t, v, 0.5, 1):8.0f}{window[s]:8.0f}{min(v[10:]):8.0f}")
    for m in ("ecocc", "ccfit"):
        if m not in window:
            continue
        gains = [100 * (window[m] / window[b] - 1) if b in window else float("nan")
                 for b in ("1vl", "ith", "hfdi", "voqnet")]
        paper = ("   (paper: " + ", ".join(f"{p:+d} %" for p in PAPER[m][conf]) + ")"
                 if pattern == 2 and conf in PAPER[m] else "")
        print(f"  gain of {m} over 1VL, IB-ITh, HFDI, VOQnet: "
              + ", ".join(f"{g:+.0f} %" for g in gains) + paper)
    trees = {1: "1 hot spot", 2: "4 hot spots", 3: "6 hot spots"}[pattern]
    plot(results, f"{plots}/{png}",
         f"Paper VI configuration #{conf}, traffic pattern #{pattern} ({trees}, 1-2 ms)",
         [(f"ecocc-{run}-{s}", data[s], title) for s, title in schemes])


def main():
    results, plots = sys.argv[1:3]
    if len(sys.argv) > 3 and sys.argv[3] == "--large":
        report(results, plots, 3, 2, [s for s in SCHEMES if s[0] not in ("ccfit", "voqnet")],
               "ecocc-conf3.png")
        return
    for pattern in (2, 1, 3):
        for conf in (1, 2):
            png = f"ecocc-conf{conf}.png" if pattern == 2 else f"ecocc-conf{conf}-p{pattern}.png"
            report(results, plots, conf, pattern, SCHEMES, png)


if __name__ == "__main__":
    main()
