#!/usr/bin/env python3
"""Writes the DDBBM scenarios (configs/scenarios/dbbm/): Nachiondo, Flich and Duato's Table 1
cases #1B-#5B on the 64-node BMIN (a 4-ary 3-tree of 8-port switches), #7B on the 1024-node BMIN
(a 4-ary 5-tree) and the meshes #1M-#9M, once per queuing scheme. docs/experiments/dbbm.md
explains every value. Run from the repository root: scripts/dbbm_scenarios.py"""
import os
import random

HOTSPOT = 31  # the paper's end node 30, counted from 0 [D:L49, D:L204]
PAYLOAD = 256  # one 282-byte packet per message: the paper's 64-byte packets, scaled to IB's MTU
PORT_BUFFER = 16 * 320  # 1 KB of 64-byte packets = 16 packets [D:L139], here 16 packets of 5 blocks

# Table 1 [D:L153-L172]: (random sources' load, hot sources' load, hotspots); #1B all uniform.
CASES = {
    "1b": (1.0, None, 0),
    "2b": (0.6, 0.6, 1),
    "3b": (0.6, 1.0, 1),
    "4b": (0.9, 0.6, 1),
    "5b": (0.6, 1.0, 5),
    "7b": (0.6, 0.6, 1),
}
# Levels of the 4-ary n-tree: 3 for the 64-node BMIN, 5 for #7B's 1024 nodes. #6B's 512 nodes
# are not a power of 4, and the paper does not say how its 8-port switches build them.
LEVELS = {"7b": 5}

# Meshes of Table 1 [D:L153-L172]: (dims, hosts per switch, random load, hot load). Routing is
# dimension order [D:L151]; a switch has 2 ports per dimension plus its hosts'.
MESHES = {
    "1m": ([8, 8], 1, 0.2, None),
    "2m": ([4, 4], 4, 0.2, None),
    "3m": ([8, 8], 1, 0.2, 1.0),
    "4m": ([8, 8, 4], 1, 0.2, 1.0),
    "5m": ([4, 4], 4, 0.2, 1.0),
    "6m": ([16, 16], 1, 0.2, 1.0),
    "7m": ([8, 8], 4, 0.2, 1.0),
    "8m": ([4, 4], 16, 0.05, 1.0),
    "9m": ([4, 4, 4], 4, 0.2, 1.0),
}
CASES.update({c: (m[2], m[3], 1 if m[3] else 0) for c, m in MESHES.items()})

# scheme: (description, data VLs, queuing policy, queues sharing the port buffer, mechanism)
SCHEMES = {
    "1q": ("one queue per port", 1, "queuing.single", 1, "mechanism: none"),
    "voqsw": ("VOQsw: a queue per output port, sharing the VL's buffer (IB credits per VL)", 1,
              "queuing.voqsw", 1, "mechanism: none"),
    "voqsw-static": ("VOQsw as the paper models it: the buffer divided among the output ports, "
                     "credits per queue (look-ahead, not IB)", 1, "queuing.voqsw-static", 1,
                     "mechanism: none"),
    "voqnet": ("VOQnet: a queue, a buffer and credits per destination (not IB)", 1,
               "queuing.voqnet", 1, "mechanism: none"),
    "dbbm4": ("DBBM-4Q: queue = DLID mod 4, as the SL", 4, "queuing.single", 4,
              "mechanism: dbbm\n  parameters: {queues: 4}"),
    "dbbm8": ("DBBM-8Q: queue = DLID mod 8, as the SL", 8, "queuing.single", 8,
              "mechanism: dbbm\n  parameters: {queues: 8}"),
    "ddbbm5": ("DDBBM-5Q: 4 DBBM queues + 1 dynamic (IB form: SLs chosen at the source)", 8,
               "queuing.single", 5, "mechanism: ddbbm\n  parameters: {queues: 4%s}"),
    "ddbbm5-paper": ("DDBBM-5Q in the paper's form: every switch maps DLID and congestion bit", 8,
                     "queuing.single", 5,
                     "mechanism: ddbbm\n  parameters: {queues: 4, form: paper%s}"),
    "ddbbm9": ("DDBBM-9Q: 8 DBBM queues + 1 dynamic", 15, "queuing.single", 9,
               "mechanism: ddbbm\n  parameters: {queues: 8%s}"),
}

# Which schemes each case runs; #1B also with the source test off (SIT 0).
RUNS = {
    "1b": ["1q", "voqsw", "voqsw-static", "voqnet", "dbbm4", "ddbbm5", "ddbbm5-sit0"],
    "2b": ["1q", "voqsw", "voqsw-static", "voqnet", "dbbm4", "dbbm8", "ddbbm5", "ddbbm5-paper"],
    "3b": ["1q", "voqsw", "voqsw-static", "voqnet", "dbbm4", "dbbm8", "ddbbm5"],
    "4b": ["1q", "voqsw", "voqsw-static", "voqnet", "dbbm4", "dbbm8", "ddbbm5"],
    "5b": ["1q", "voqsw", "voqsw-static", "voqnet", "dbbm4", "ddbbm5"],
    # DBBM-16Q and DDBBM-17Q, the paper's other #7B pair, need 16 and 17 VLs: IB has 15 data
    # VLs. VOQnet (1024 queues per port) did not finish 20 us of the run in 12 minutes here:
    # not committed.
    "7b": ["1q", "voqsw", "dbbm8", "ddbbm9"],
}
RUNS.update({m: ["1q", "voqsw", "voqnet", "dbbm4", "ddbbm5"] for m in MESHES})


def nodes(case):
    """End nodes of a case's network."""
    if case in MESHES:
        dims, per, _, _ = MESHES[case]
        n = per
        for d in dims:
            n *= d
        return n
    return 4 ** LEVELS.get(case, 3)


def name(case, h):
    """Host h (1-based, in node order): H<h> on the BMIN; H<c0>.<c1>-<port> on a mesh
    (docs/topologies.md)."""
    if case not in MESHES:
        return f"H{h}"
    dims, per, _, _ = MESHES[case]
    sw, port = divmod(h - 1, per)
    coords = []
    for d in reversed(dims):  # the last dimension varies fastest
        sw, c = divmod(sw, d)
        coords.insert(0, str(c))
    return f"H{'.'.join(coords)}-{port + 1}"


def hosts(ids, case):
    return "[" + ", ".join(name(case, i) for i in ids) + "]"


def sources(case):
    """30 % of the nodes, rounded (19 of 64, 77 of 256, 307 of 1024), send to the hotspots, the
    others to random destinations, drawn once with a fixed seed; the hotspots are not hot
    sources."""
    n = nodes(case)
    rng = random.Random(2008)
    hotspots = [HOTSPOT] + sorted(rng.sample([h for h in range(1, n + 1) if h != HOTSPOT],
                                             CASES[case][2] - 1)) if CASES[case][2] else []
    pool = [h for h in range(1, n + 1) if h not in hotspots]
    hot = sorted(random.Random(30).sample(pool, round(0.3 * n))) if hotspots else []
    background = [h for h in range(1, n + 1) if h not in hot]
    return hotspots, hot, background


def traffic(case):
    bg_load, hot_load, _ = CASES[case]
    hotspots, hot, background = sources(case)
    common = f"message_bytes: {PAYLOAD}, transport: uc, arrival: poisson"
    text = f"""  - {{name: background, pattern: uniform, sources: {hosts(background, case)},
     load: {bg_load}, {common}}}\n"""
    # Each hot source sends to one hotspot; with several (#5B) they are dealt out in turn, so
    # each of the five trees has four sources or three: "less intense" trees [D:L233].
    for i, h in enumerate(hotspots):
        group = hot[i::len(hotspots)]
        flow = "hot" if len(hotspots) == 1 else f"hot{i + 1}"
        text += f"""  - {{name: {flow}, pattern: incast, dst: {name(case, h)}, sources: {hosts(group, case)},
     load: {hot_load}, {common}}}\n"""
    return text


def topology(case):
    if case not in MESHES:
        n = LEVELS.get(case, 3)
        return f"""  generator: kary-ntree  # the {4 ** n}x{4 ** n} BMIN of 8-port switches [D:L151]
  k: 4
  n: {n}"""
    dims, per, _, _ = MESHES[case]
    return f"""  generator: mesh  # {'x'.join(map(str, dims))} mesh, {per} end node(s) per switch
  dims: {dims}
  hosts_per_switch: {per}"""


def scenario(case, scheme):
    sit0 = scheme.endswith("-sit0")
    base = scheme[:-5] if sit0 else scheme
    desc, vls, queuing, nq, cc = SCHEMES[base]
    if "%s" in cc:
        cc = cc % (", sit: 0" if sit0 else "")
    if sit0:
        desc += ", SIT 0 (the source test off)"
    vl_buffer = PORT_BUFFER // nq // 64 * 64
    return f"""# Generated by scripts/dbbm_scenarios.py; docs/experiments/dbbm.md explains every value.
name: dbbm-{case}-{scheme}
description: "Nachiondo et al. case #{case.upper()}: {desc}"
seed: 1
topology:
{topology(case)}
  link: 4xSDR  # 8 Gbit/s of data: the paper's 1 GB/s links [D:L143]
fabric:
  data_vls: {vls}
  mtu: {PAYLOAD}
  routing: {"dor" if case in MESHES else "ftree"}
  vl_buffer_bytes: {vl_buffer}  # the port's {PORT_BUFFER} bytes divided by {nq} queue(s) [D:L139]
  vlarb: {{policy: vlarb.roundrobin}}  # equal-weight round robin over the queues [D:L141]
  # Input and output buffers, the crossbar 1.5x the link [D:L139, D:L141]
  switch: {{queuing: {queuing}, speedup: 1.5, output_buffer_bytes: {vl_buffer}}}
congestion_control:
  {cc}
traffic:
{traffic(case)}run:
  duration: 2ms
  interval: 100us
  measure: {{from: 500us, to: 2ms}}
"""


def main():
    out = "configs/scenarios/dbbm"
    os.makedirs(out, exist_ok=True)
    for case, schemes in RUNS.items():
        for scheme in schemes:
            with open(os.path.join(out, f"{case}-{scheme}.yaml"), "w") as f:
                f.write(scenario(case, scheme))


if __name__ == "__main__":
    main()
