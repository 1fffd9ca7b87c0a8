#!/usr/bin/env python3
"""Plots and figures for docs/experiments/santos.md from the runs of scripts/santos-experiments.sh.

  scripts/santos_plot.py rates RESULTS_DIR OUT.png TITLE FROM_MS TO_MS
      Aggregate rates over time of a Santos two-switch run (flows named L*, R* and V): local,
      remote and victim, and the root (B->BC: local + remote) and inter-switch (remote + victim)
      links, as fractions of the 1 GB/s link, each over a 2 ms sliding window centred on the
      point (the paper's Fig. 2 and 3). Prints the means over (FROM_MS, TO_MS].
  scripts/santos_plot.py recovery OUT.png
      The paper's Fig. 5: the rate of one flow recovering from R_min with no marks, ACK-clocked
      (one ACK every 1/r packet times), for AIMD, FIMD and LIPD, in ms at 2.048 us per packet
      (1 GB/s, 2048-byte packets). Prints the time each takes to reach R_max. The formulas are
      those of emulator/cc/santos/rate_functions.cc (tests/unit/santos_test.cc checks its times).
  scripts/santos_plot.py sweep SWEEP.csv OUT.png
      The paper's Fig. 6 from the sweep's table: root and inter-switch utilisation against the
      input buffer size, per response function, discrete and continuous.
"""
import csv
import subprocess
import sys

LINK_GBPS = 8.0  # 4x SDR: 1 GB/s of data


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def rates(results, out, title, lo, hi):
    lo, hi = float(lo), float(hi)
    rows = list(csv.DictReader(open(f"{results}/flows.csv")))
    names = [c[: -len("_rx_gbps")] for c in rows[0] if c.endswith("_rx_gbps")]
    group = {"local": [n for n in names if n.startswith("L")],
             "remote": [n for n in names if n.startswith("R")],
             "victim": [n for n in names if n == "V"]}
    t = [float(r["time_ms"]) for r in rows]
    series = {k: [sum(float(r[n + "_rx_gbps"]) for n in v) / LINK_GBPS for r in rows]
              for k, v in group.items()}
    series["root link"] = [a + b for a, b in zip(series["local"], series["remote"])]
    series["inter-switch link"] = [a + b for a, b in zip(series["remote"], series["victim"])]
    # 2 ms centred on the point: this bin and half of each neighbour (1 ms bins).
    def smooth(v):
        return [(v[max(i - 1, 0)] / 2 + v[i] + v[min(i + 1, len(v) - 1)] / 2) / 2
                for i in range(len(v))]
    data = f"{out}.dat"
    keys = ["local", "remote", "victim", "root link", "inter-switch link"]
    with open(data, "w") as f:
        sm = {k: smooth(series[k]) for k in keys}
        for i, x in enumerate(t):
            f.write(f"{x} " + " ".join(f"{sm[k][i]:.4f}" for k in keys) + "\n")
    sel = [i for i, x in enumerate(t) if lo < x <= hi]
    means = {k: sum(series[k][i] for i in sel) / len(sel) for k in keys}
    print(f"{results}: " + ", ".join(f"{k} {means[k]:.3f}" for k in keys))
    plots = ", ".join(f"'{data}' using 1:{i + 2} with lines lw 2 title '{k}'"
                      for i, k in enumerate(keys))
    gnuplot(f"""set terminal pngcairo size 900,500
set output '{out}'
set title '{title}'
set xlabel 'time (ms)'
set ylabel 'rate / link rate (2 ms window)'
set yrange [0:1.05]
set key outside right
plot {plots}
""")


def rate_functions(r_min=1 / 256, m=2):
    return {
        "FIMD": lambda r: min(r * m ** (r_min / r), 1),
        "LIPD": lambda r: min(r / (1 - r_min), 1),
        "AIMD": lambda r: min(r + r_min * r_min / r, 1),
    }


def recovery(out):
    us_per_packet = 2.048
    data = f"{out}.dat"
    with open(data, "w") as f:
        for name, inc in rate_functions().items():
            r, t = 1 / 256, 0.0
            f.write(f"# {name}\n0 {r}\n")
            while r < 1:
                t += 1 / r
                r = inc(r)
                f.write(f"{t * us_per_packet / 1000:.4f} {r:.5f}\n")
            print(f"{name}: R_min to R_max in {t * us_per_packet / 1000:.1f} ms")
            f.write("\n\n")
    gnuplot(f"""set terminal pngcairo size 900,500
set output '{out}'
set title 'Santos Fig. 5: recovery from R_min with no marks (1 GB/s, 2048-byte packets)'
set xlabel 'time (ms)'
set ylabel 'rate / R_max'
set logscale x
set xrange [0.01:200]
set key left top
plot '{data}' index 0 with lines lw 2 title 'FIMD', '' index 1 with lines lw 2 title 'LIPD', \\
     '' index 2 with lines lw 2 dt 2 title 'AIMD'
""")


def sweep(table, out):
    rows = list(csv.DictReader(open(table)))
    data = f"{out}.dat"
    blocks = []
    with open(data, "w") as f:
        for rate in ["lipd", "fimd", "aimd"]:
            for form in ["discrete", "continuous"]:
                sel = [r for r in rows if r["rate"] == rate and r["form"] == form]
                if not sel:
                    continue
                blocks.append(f"{rate.upper()} {form}")
                for r in sorted(sel, key=lambda r: int(r["buffer_packets"])):
                    f.write(f"{r['buffer_packets']} {r['root']} {r['isl']}\n")
                f.write("\n\n")
    plots = []
    for i, b in enumerate(blocks):
        dt = 1 if b.endswith("discrete") else 2
        plots.append(f"'{data}' index {i} using 1:2 with linespoints lw 2 dt {dt} lc {i // 2 + 1} "
                     f"title 'root, {b}'")
        plots.append(f"'{data}' index {i} using 1:3 with linespoints lw 1 dt {dt} lc {i // 2 + 1} "
                     f"pt 6 title 'inter-switch, {b}'")
    gnuplot(f"""set terminal pngcairo size 1000,550
set output '{out}'
set title 'Santos Fig. 6: utilisation against the input buffer size (L = R = 10, victim)'
set xlabel 'input buffer (packets per port)'
set ylabel 'utilisation (mean of the last 400 ms)'
set yrange [0:1.05]
set logscale x 2
set key outside right
plot {", ".join(plots)}
""")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "rates":
        rates(*sys.argv[2:7])
    elif cmd == "recovery":
        recovery(sys.argv[2])
    elif cmd == "sweep":
        sweep(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
