#!/usr/bin/env python3
"""Figures and plots for docs/experiments/ecocc-traces.md from the runs of
scripts/ecocc-traces-experiments.sh.

  scripts/ecocc_traces_plot.py RESULTS_DIR PLOTS_DIR

For each HPCC test and scenario (SC1 alone, SC2 one permanent hot spot, SC3 four): each
scheme's execution time, normalized to 1VL's in the same scenario (Paper VI's Fig. 8 a-c) and to
the test's time alone on 1VL (SC1), the slowdown the hot spots cause. A bar chart per scenario of
the slowdown (log scale) goes to PLOTS_DIR/ecocc-traces-sc<n>.png; a replay unfinished at the
run's limit is drawn at the limit.
"""
import json
import subprocess
import sys

TESTS = [("ptrans", "ptrans"), ("beff", "beff-NatRing"), ("mpifft", "mpifft")]
SCHEMES = [("1vl", "1VL"), ("ith", "IB-ITh"), ("hfdi", "HFDI"), ("ecocc", "EcoCC"),
           ("voqnet", "VOQnet")]


def execution_us(results, name):
    """The replay's execution time, or None if it had not finished by the run's limit."""
    with open(f"{results}/{name}/summary.json") as f:
        return json.load(f)["traces"][0]["execution_us"]


def limit_us(results, name):
    with open(f"{results}/{name}/summary.json") as f:
        return json.load(f)["duration_ms"] * 1000


def main():
    results, plots = sys.argv[1:3]
    alone = {test: execution_us(results, f"sc1-{test}-1vl") for test, _ in TESTS}
    for sc in (1, 2, 3):
        print(f"SC{sc}: execution time in us; normalized to 1VL in SC{sc}; to 1VL alone (SC1)")
        rows = []
        for test, title in TESTS:
            t = {s: execution_us(results, f"sc{sc}-{test}-{s}") for s, _ in SCHEMES}
            base = t["1vl"]
            print(f"  {title}")
            for s, name in SCHEMES:
                if t[s] is None:
                    print(f"    {name:8} unfinished at {limit_us(results, f'sc{sc}-{test}-{s}'):.0f}")
                    continue
                vs_1vl = f"{t[s] / base:7.3f}" if base else "      —"
                print(f"    {name:8}{t[s]:12.1f}{vs_1vl}{t[s] / alone[test]:9.3f}")
            rows.append((title, [(t[s] or limit_us(results, f"sc{sc}-{test}-{s}")) / alone[test]
                                 for s, _ in SCHEMES]))
        dat = f"{results}/ecocc-traces-sc{sc}.dat"
        with open(dat, "w") as f:
            f.write("# test " + " ".join(n for _, n in SCHEMES) + "\n")
            for title, v in rows:
                f.write(title + " " + " ".join(f"{x:.4f}" for x in v) + "\n")
        cols = ", ".join(f'"{dat}" using {i + 2}:xtic(1) title "{n}"'
                         for i, (_, n) in enumerate(SCHEMES))
        subprocess.run(["gnuplot"], check=True, input=f"""set terminal pngcairo size 900,450
set output "{plots}/ecocc-traces-sc{sc}.png"
set title "Paper VI Fig. 8, SC{sc}: HPCC traces on 256 nodes (configuration #2)"
set ylabel "execution time / the test alone on 1VL"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside right
set logscale y
set yrange [0.8:*]
set grid ytics
plot {cols}
""".encode())
    even = [execution_us(results, f"sc2-ptrans-even-{s}") for s in ("1vl", "voqnet")]
    print(f"the paper's placement (ranks on even nodes), ptrans in SC2: 1VL {even[0]:.1f} us, "
          f"VOQnet {even[1]:.1f} us")


if __name__ == "__main__":
    main()
