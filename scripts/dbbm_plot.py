#!/usr/bin/env python3
"""Figures and plots for docs/experiments/dbbm.md from the runs of scripts/dbbm-experiments.sh.

  scripts/dbbm_plot.py RESULTS_DIR PLOTS_DIR

Prints, for cases #2B-#5B, each scheme's network throughput (payload delivered over the
measurement window) and its ratio to DDBBM-5Q beside the paper's (Fig. 7, [D:L233]); for #1B the
same with SIT 0 and 6 (Figs. 3-4); for #3B the accepted traffic per destination (Fig. 5:
each host's delivery link on the wire, over the whole run, as a fraction of the link); for the
meshes #1M-#9M the throughput relative to DDBBM-5Q (Fig. 8), for #7B relative to DDBBM-9Q, and
for #7B, #5M and #8M the accepted traffic per destination (Figs. 5-6). A run that is missing is
shown as "-". Writes PLOTS_DIR/dbbm-throughput.png, dbbm-3b-destinations.png, dbbm-1b.png,
dbbm-meshes.png and dbbm-8m-7b-destinations.png.
"""
import csv
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dbbm_scenarios as scen  # noqa: E402  (host names, node counts, hot sources)

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


# Meshes of Table 1 and the schemes run on them; #7B (1024 nodes) with DBBM-8Q and DDBBM-9Q.
MESHES = ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m"]
MESH_SCHEMES = [("1q", "1Q"), ("voqsw", "VOQsw"), ("dbbm4", "DBBM-4Q"), ("voqnet", "VOQnet")]
BMIN7_SCHEMES = [("1q", "1Q"), ("voqsw", "VOQsw"), ("dbbm8", "DBBM-8Q")]  # VOQnet: not run
# Accepted traffic per destination: (case, DBBM queues of the mapping, schemes).
FAIRNESS = [("5m", 4, ["voqnet", "voqsw", "dbbm4", "ddbbm5"]),
            ("8m", 4, ["voqnet", "voqsw", "dbbm4", "ddbbm5"]),
            ("7b", 8, ["1q", "voqsw", "dbbm8", "ddbbm9"])]


def relative(results, case, scheme, ref):
    d = summary(results, f"{case}-{scheme}")
    return throughput(d) / throughput(ref) if d else None


def fmt(r):
    return f"{r:.3f}" if r is not None else "-"


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


def accepted(results, case, scheme):
    """Per destination, in host order (H1, H2, ... or the mesh's node order): the switch port
    that delivers to it, wire Gbit/s over the run / link; None if the run is missing."""
    path = f"{results}/{case}-{scheme}/ports.csv"
    if not os.path.exists(path):
        return None
    index = {scen.name(case, h): h for h in range(1, scen.nodes(case) + 1)}
    rate = {}
    for r in csv.DictReader(open(path)):
        if r["vl"] == "0" and r["peer"] in index and r["device"] not in index:
            rate[index[r["peer"]]] = float(r["tx_gbps"]) / LINK
    return [rate[h] for h in sorted(rate)]


def fairness(v, queues):
    """The hotspot's accepted traffic and, over the other destinations, min, mean and max, the
    mean of the hotspot's DBBM class (host index = the hotspot's mod `queues`: LIDs are the
    switches' count plus the host index, so DLID mod x is the same) and of the rest."""
    hs = scen.HOTSPOT
    cold = {h: x for h, x in enumerate(v, 1) if h != hs}
    same = [x for h, x in cold.items() if h % queues == hs % queues]
    rest = [x for h, x in cold.items() if h % queues != hs % queues]
    c = list(cold.values())
    return (v[hs - 1], min(c), sum(c) / len(c), max(c), sum(same) / len(same),
            sum(rest) / len(rest))


def relative_bars(dat, png, network, columns):
    """A bar chart of throughput relative to DDBBM-5Q per case: dat's first row names the
    schemes, each further row is a case; '?' is a run not made."""
    gnuplot(f"""set terminal pngcairo size 900,450
set output "{png}"
set title "Network throughput relative to DDBBM-5Q, {network}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set datafile missing "?"
set yrange [0:1.2]
set ylabel "throughput / DDBBM-5Q"
set key outside right
set grid ytics
plot for [i=2:{columns + 1}] "{dat}" using i:xtic(1) title columnheader(i)
""")


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
    print("Meshes (Fig. 8): throughput relative to DDBBM-5Q (its Gbit/s in brackets)")
    mesh_rows = []
    for case in MESHES:
        ref = summary(results, f"{case}-ddbbm5")
        if not ref:
            continue
        ratios = [relative(results, case, s, ref) for s, _ in MESH_SCHEMES]
        mesh_rows.append((case, ratios))
        print(f"  #{case.upper()} ({throughput(ref):.1f}) " + "  ".join(
            f"{title} {fmt(r)}" for (_, title), r in zip(MESH_SCHEMES, ratios)))
    print()
    ref = summary(results, "7b-ddbbm9")
    if ref:
        print("#7B, 1024-node BMIN: throughput relative to DDBBM-9Q "
              f"({throughput(ref):.1f} Gbit/s)")
        print("  " + "  ".join(f"{title} {fmt(relative(results, '7b', s, ref))}"
                               for s, title in BMIN7_SCHEMES))
        print()
    print("Accepted traffic per destination (fraction of the link, on the wire; Figs. 5-6);")
    print("'class': the destinations in the hotspot's DBBM queue, 'rest': the others")
    fair = {}
    for case, queues, schemes in FAIRNESS:
        for s in schemes:
            v = accepted(results, case, s)
            if v is None:
                continue
            fair[(case, s)] = v
            hot, lo, mean, hi, same, rest = fairness(v, queues)
            print(f"  #{case.upper():3}{s:8} hotspot {hot:.3f}; others min {lo:.3f} mean "
                  f"{mean:.3f} max {hi:.3f}; class {same:.3f} rest {rest:.3f}")
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
    relative_bars(f"{results}/dbbm-throughput.dat", f"{plots}/dbbm-throughput.png",
                  "64-node BMIN (Nachiondo et al. Fig. 7)", len(titles))
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
    if mesh_rows:
        with open(f"{results}/dbbm-meshes.dat", "w") as f:
            f.write("case " + " ".join(f'"{t}"' for _, t in MESH_SCHEMES) + "\n")
            for c, ratios in mesh_rows:
                f.write(f"{c.upper()} " + " ".join(f"{r:.4f}" if r is not None else "?"
                                                   for r in ratios) + "\n")
        relative_bars(f"{results}/dbbm-meshes.dat", f"{plots}/dbbm-meshes.png",
                      "meshes (Nachiondo et al. Fig. 8)", len(MESH_SCHEMES))
    panels = [(c, s, t) for c, s, t in [
        ("8m", "voqsw", "#8M VOQsw (IB: shared VL buffer)"), ("8m", "dbbm4", "#8M DBBM-4Q"),
        ("8m", "ddbbm5", "#8M DDBBM-5Q"), ("8m", "voqnet", "#8M VOQnet"),
        ("7b", "dbbm8", "#7B DBBM-8Q"), ("7b", "ddbbm9", "#7B DDBBM-9Q")] if (c, s) in fair]

    def style(n):  # a bar per destination while they fit, points for the 1024 of #7B
        return "impulses" if n <= 256 else "points pt 7 ps 0.4"

    if panels:
        for c, s, _ in panels:
            with open(f"{results}/dbbm-{c}-{s}-destinations.dat", "w") as f:
                f.writelines(f"{i} {x:.4f}\n" for i, x in enumerate(fair[(c, s)]))  # from 0
        gnuplot(f"""set terminal pngcairo size 900,{170 * len(panels)}
set output "{plots}/dbbm-8m-7b-destinations.png"
set multiplot layout {len(panels)},1 title "Accepted traffic per destination, #8M (256 nodes) and #7B (1024); hotspot: end node {scen.HOTSPOT - 1} (Figs. 5-6)"
set style fill solid 0.8
set ylabel "of the link"
set logscale y
set yrange [0.001:1.5]
""" + "".join(f"""set title "{t}"
set xrange [-1:{len(fair[(c, s)])}]
plot "{results}/dbbm-{c}-{s}-destinations.dat" using 1:2 with {style(len(fair[(c, s)]))} notitle
""" for c, s, t in panels) + "unset multiplot\n")


if __name__ == "__main__":
    main()
