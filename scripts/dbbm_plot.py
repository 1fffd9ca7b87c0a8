#!/usr/bin/env python3
"""Figures and plots for docs/experiments/dbbm.md from the runs of scripts/dbbm-experiments.sh.

  scripts/dbbm_plot.py RESULTS_DIR PLOTS_DIR

Prints, for cases #2B-#5B, each scheme's network throughput (payload delivered over the
measurement window) and its ratio to DDBBM-5Q beside the paper's (Fig. 7, [D:L233]); for #1B the
same with SIT 0 and 6 (Figs. 3-4); and for #3B the accepted traffic per destination (Fig. 5:
each host's delivery link on the wire, over the whole run, as a fraction of the link). Writes
PLOTS_DIR/dbbm-throughput.png, dbbm-3b-destinations.png and dbbm-1b.png.
"""
import csv
import json
import subprocess
import sys

LINK = 8.0  # Gbit/s of data on 4x SDR
SCHEMES = [("1q", "1Q"), ("voqsw", "VOQsw"), ("voqsw-static", "VOQsw static"), ("dbbm4", "DBBM-4Q"), ("dbbm8", "DBBM-8Q"),
           ("ddbbm5", "DDBBM-5Q"), ("ddbbm5-paper", "DDBBM-5Q paper form"), ("voqnet", "VOQnet")]
# The paper's throughput relative to DDBBM-5Q [D:L233]; None: not given.
PAPER = {
    "2b": {"voqsw-static": 0.70, "voqsw": 0.70, "dbbm4": 0.92, "ddbbm5": 1.0, "voqnet": 1.0},
    "3b": {"voqsw-static": 0.59, "voqsw": 0.59, "dbbm4": 0.88, "ddbbm5": 1.0, "voqnet": 1.0},
    "4b": {"voqsw-static": 0.61, "voqsw": 0.61, "dbbm4": 0.89, "ddbbm5": 1.0, "voqnet": 1.0},
    "5b": {"1q": 1.0, "voqsw": 1.0, "voqsw-static": 1.0, "dbbm4": 1.0, "ddbbm5": 1.0, "voqnet": 1.0},
}


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def summary(results, name):
    try:
        return json.load(open(f"{results}/{name}/summary.json"))
    except FileNotFoundError:
        return None


def throughput(s):
    return sum(f["rx_gbps"] for f in s["flows"])


def per_destination(results, name):
    """Each host's accepted traffic: its leaf's down port, wire Gbit/s over the run / link."""
    rate = {}
    for r in csv.DictReader(open(f"{results}/{name}/ports.csv")):
        if r["peer"].startswith("H") and r["vl"] == "0" and r["device"].startswith("L"):
            rate[int(r["peer"][1:])] = float(r["tx_gbps"]) / LINK
    return [rate[h] for h in sorted(rate)]


def main():
    results, plots = sys.argv[1:3]
    rows = []
    print(f"{'case':6}{'scheme':22}{'Gbit/s':>9}{'/DDBBM-5Q':>11}{'paper':>8}")
    for case in ["2b", "3b", "4b", "5b"]:
        ref = summary(results, f"{case}-ddbbm5")
        for s, title in SCHEMES:
            d = summary(results, f"{case}-{s}")
            if not d:
                continue
            ratio = throughput(d) / throughput(ref)
            paper = PAPER[case].get(s)
            rows.append((case, title, ratio))
            print(f"#{case.upper():5}{title:22}{throughput(d):9.1f}{ratio:11.3f}"
                  + (f"{paper:8.2f}" if paper is not None else f"{'-':>8}"))
    print()
    print("Meshes (Fig. 8): throughput relative to DDBBM-5Q")
    for case in ["2m", "3m", "5m"]:
        ref = throughput(summary(results, f"{case}-ddbbm5"))
        print(f"  #{case.upper()} " + "  ".join(
            f"{title} {throughput(summary(results, f'{case}-{s}')) / ref:.3f}"
            for s, title in [("1q", "1Q"), ("voqsw", "VOQsw"), ("dbbm4", "DBBM-4Q"),
                             ("voqnet", "VOQnet")]))
    print()
    print("#1B, uniform at 100 % (Figs. 3-4): throughput relative to VOQnet")
    ref = summary(results, "1b-voqnet")
    for s, title in [("1q", "1Q"), ("voqsw", "VOQsw"), ("voqsw-static", "VOQsw static"),
                     ("dbbm4", "DBBM-4Q"),
                     ("ddbbm5-sit0", "DDBBM-5Q, SIT 0"), ("ddbbm5", "DDBBM-5Q, SIT 6")]:
        d = summary(results, f"1b-{s}")
        print(f"  {title:22}{throughput(d):9.1f}{throughput(d) / throughput(ref):11.3f}")
    print()
    print("#3B accepted traffic per destination (fraction of the link, on the wire):")
    dest = {s: per_destination(results, f"3b-{s}")
            for s in ["voqnet", "voqsw", "voqsw-static", "dbbm4", "ddbbm5"]}
    for s, v in dest.items():
        cold = [x for i, x in enumerate(v) if i + 1 != 31]
        print(f"  {s:8} hotspot H31 {v[30]:.3f}; others min {min(cold):.3f} mean "
              f"{sum(cold) / len(cold):.3f} max {max(cold):.3f}")

    with open(f"{results}/dbbm-throughput.dat", "w") as f:
        cases = ["2b", "3b", "4b", "5b"]
        titles = [t for _, t in SCHEMES if t != "DDBBM-5Q paper form"]
        f.write("case " + " ".join(f'"{t}"' for t in titles) + "\n")
        for c in cases:
            vals = {t: r for (cc, t, r) in rows if cc == c}
            f.write(f"{c.upper()} " + " ".join(f"{vals.get(t, 0):.4f}" for t in titles) + "\n")
    gnuplot(f"""set terminal pngcairo size 900,450
set output "{plots}/dbbm-throughput.png"
set title "Network throughput relative to DDBBM-5Q, 64-node BMIN (Nachiondo et al. Fig. 7)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:1.2]
set ylabel "throughput / DDBBM-5Q"
set key outside right
set grid ytics
plot for [i=2:{len(titles) + 1}] "{results}/dbbm-throughput.dat" using i:xtic(1) title columnheader(i)
""")
    with open(f"{results}/dbbm-3b-destinations.dat", "w") as f:
        for i in range(64):
            f.write(f"{i} " + " ".join(f"{dest[s][i]:.4f}" for s in dest) + "\n")
    gnuplot(f"""set terminal pngcairo size 900,850
set output "{plots}/dbbm-3b-destinations.png"
set multiplot layout 5,1 title "Case #3B: accepted traffic per destination (H31 is the hotspot; Fig. 5)"
set yrange [0:0.6]
set xrange [-1:64]
set style fill solid 0.8
set boxwidth 0.8
set ylabel "of the link"
""" + "".join(f"""set title "{t}"
plot "{results}/dbbm-3b-destinations.dat" using 1:{i + 2} with boxes notitle
""" for i, t in enumerate(["VOQnet", "VOQsw (IB: shared VL buffer)", "VOQsw static (the paper's)", "DBBM-4Q", "DDBBM-5Q"])) + "unset multiplot\n")
    gnuplot(f"""set terminal pngcairo size 800,450
set output "{plots}/dbbm-1b.png"
set title "Case #1B, uniform at 100 %: delivered payload over time (Figs. 3-4)"
set datafile separator ","
set key autotitle columnhead bottom right
set xlabel "time (ms)"
set ylabel "Gbit/s, whole network"
set yrange [0:*]
plot "{results}/1b-voqnet/flows.csv" using 1:2 with lines lw 2 title "VOQnet", \\
     "{results}/1b-ddbbm5/flows.csv" using 1:2 with lines lw 2 title "DDBBM-5Q, SIT 6", \\
     "{results}/1b-ddbbm5-sit0/flows.csv" using 1:2 with lines lw 2 title "DDBBM-5Q, SIT 0", \\
     "{results}/1b-1q/flows.csv" using 1:2 with lines title "1Q"
""")


if __name__ == "__main__":
    main()
