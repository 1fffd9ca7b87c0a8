#!/usr/bin/env python3
"""Writes traces (docs/traces.md) of the communication of three HPC Challenge tests, the three of
the thesis's Paper VI trace study (Fig. 8): PTRANS, b_eff's natural ring and MPIFFT. The paper's
Extrae traces are not published, so these follow what the tests do; their compute gaps come from
stated rates (the options), not from a measured machine. docs/experiments/ecocc-traces.md says
which values the experiment uses and why.

  scripts/hpcc_traces.py ptrans --ranks 128 --out ptrans.trace
  scripts/hpcc_traces.py beff-natring --ranks 128 --out beff.trace
  scripts/hpcc_traces.py mpifft --ranks 128 --out mpifft.trace
"""
import argparse
import math
from collections import defaultdict


class Trace:
    def __init__(self, ranks, title):
        self.ranks = ranks
        self.ops = [[] for _ in range(ranks)]
        self.title = title

    def send(self, r, peer, n):
        self.ops[r].append(f"{r} send {peer} {n}")

    def recv(self, r, peer, n):
        self.ops[r].append(f"{r} recv {peer} {n}")

    def compute(self, r, ns):
        if ns > 0:
            self.ops[r].append(f"{r} compute {ns:.0f}")

    def write(self, path):
        with open(path, "w") as f:
            f.write(f"# {self.title}\n# written by scripts/hpcc_traces.py\nranks {self.ranks}\n")
            for r in range(self.ranks):
                f.write("\n".join(self.ops[r]) + "\n")


def grid(ranks):
    """HPCC's process grid: P x Q = ranks with P <= Q as close to square as it divides."""
    p = int(math.isqrt(ranks))
    while ranks % p:
        p -= 1
    return p, ranks // p


def ptrans(a):
    """PTRANS computes A = A^T + B on a P x Q grid, the N x N matrix distributed block-cyclically
    in NB x NB blocks: block (i, j) lives on process (i mod P, j mod Q). Block (i, j) of A^T is
    block (j, i) of A, so each process packs what its transpose partners need into one message
    per partner, sends them all, then receives all of its own (the pairs communicate at the same
    time), and adds B locally. HPCC repeats the test; so does the trace."""
    p, q = grid(a.ranks)
    nblk = a.n // a.nb
    pairs = defaultdict(int)  # (from, to) -> bytes
    for i in range(nblk):
        for j in range(nblk):
            dst = (i % p) * q + j % q  # holds block (i, j) of the result
            src = (j % p) * q + i % q  # holds block (j, i) of A
            if src != dst:
                pairs[(src, dst)] += a.nb * a.nb * 8
    t = Trace(a.ranks, f"PTRANS, N {a.n}, NB {a.nb}, grid {p}x{q}, {a.iterations} runs")
    local = a.n * a.n / a.ranks
    out = defaultdict(list)
    inn = defaultdict(list)
    for (s, d), n in sorted(pairs.items()):
        out[s].append((d, n))
        inn[d].append((s, n))
    for _ in range(a.iterations):
        for r in range(a.ranks):
            # Partners in order of their distance from r, so that no rank is everyone's first.
            for d, n in sorted(out[r], key=lambda x: (x[0] - r) % a.ranks):
                t.send(r, d, n)
            for s, n in sorted(inn[r], key=lambda x: (r - x[0]) % a.ranks):
                t.recv(r, s, n)
            t.compute(r, local / a.doubles_per_ns)
    return t


def beff_natring(a):
    """b_eff's natural ring: every rank sends to its right and left neighbours at once and
    receives from both, for each message size of the sweep (1 byte doubling up to --max-bytes),
    --repetitions times each."""
    t = Trace(a.ranks, f"b_eff natural ring, sizes 1..{a.max_bytes} bytes, "
                       f"{a.repetitions} repetitions")
    sizes = []
    s = 1
    while s <= a.max_bytes:
        sizes.append(s)
        s *= 2
    for n in sizes:
        for _ in range(a.repetitions):
            for r in range(a.ranks):
                right, left = (r + 1) % a.ranks, (r - 1) % a.ranks
                t.send(r, right, n)
                t.send(r, left, n)
                t.recv(r, left, n)
                t.recv(r, right, n)
    return t


def mpifft(a):
    """MPIFFT: a 1-D complex FFT of 2^m points computed as a 2-D one, three all-to-all
    transposes between local FFTs. Each all-to-all is P - 1 pairwise steps (step k: send to
    r + k, receive from r - k), the collective made of point-to-point messages as in the paper's
    traces."""
    points = 2 ** a.log2_points
    per_pair = points * 16 // (a.ranks * a.ranks)
    local = points / a.ranks
    flops = 5 * local * math.log2(points) / 2  # half the FFT's flops between transposes
    t = Trace(a.ranks, f"MPIFFT, 2^{a.log2_points} points, {a.iterations} runs")
    for _ in range(a.iterations):
        for _phase in range(3):
            for r in range(a.ranks):
                t.compute(r, flops / a.flops_per_ns / 3)
                for k in range(1, a.ranks):
                    t.send(r, (r + k) % a.ranks, per_pair)
                    t.recv(r, (r - k) % a.ranks, per_pair)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("test", choices=["ptrans", "beff-natring", "mpifft"])
    ap.add_argument("--ranks", type=int, default=128)
    ap.add_argument("--out", required=True)
    ap.add_argument("--iterations", type=int, default=5, help="ptrans, mpifft: runs of the test")
    ap.add_argument("--n", type=int, default=4096, help="ptrans: matrix order")
    ap.add_argument("--nb", type=int, default=64, help="ptrans: block size")
    ap.add_argument("--doubles-per-ns", type=float, default=1.0,
                    help="ptrans: the local addition's rate")
    ap.add_argument("--max-bytes", type=int, default=1 << 20, help="beff-natring: largest size")
    ap.add_argument("--repetitions", type=int, default=2, help="beff-natring: per size")
    ap.add_argument("--log2-points", type=int, default=22, help="mpifft: vector of 2^m points")
    ap.add_argument("--flops-per-ns", type=float, default=4.0, help="mpifft: a rank's FFT rate")
    a = ap.parse_args()
    if a.test == "ptrans" and a.n % a.nb:
        ap.error("--n must be a multiple of --nb")
    gen = {"ptrans": ptrans, "beff-natring": beff_natring, "mpifft": mpifft}[a.test]
    gen(a).write(a.out)


if __name__ == "__main__":
    main()
