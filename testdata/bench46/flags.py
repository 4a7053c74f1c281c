#!/usr/bin/env python3
"""Item 6 of issue 46: what V8 flags do to the between-run spread and to the
profile. Reads results/flags-*.times.json (study.sh's `flags` target: unchanged
code, 8 rounds, base and head trees of the same code) and prints, per flag set
and benchmark: the runs' median CPU time per iteration, the between-run spread
(standard deviation of log CPU time per iteration, pooled over the two trees:
0.10 is about 10 %), and the total variation distance of its self shares
(40 heaviest leaf functions over all runs) from the default runs'."""
import glob, json, math, os, statistics, sys

here = os.path.dirname(os.path.abspath(__file__))
configs = {}
for path in sorted(glob.glob(os.path.join(here, "results", "flags-*.times.json"))):
    configs[os.path.basename(path)[len("flags-"):-len(".times.json")]] = json.load(open(path))
default = configs.get("default")
for name, data in configs.items():
    for benchmark in sorted(data["self_shares"]):
        logs_by_side = []
        values = []
        for side in ("base", "head"):
            times = [run["cpu_per_iteration"].get(benchmark) for run in data["sides"].get(side, [])]
            times = [time for time in times if time]
            values += times
            logs_by_side.append([math.log(time) for time in times])
        pooled = [statistics.variance(logs) * (len(logs) - 1) for logs in logs_by_side if len(logs) > 1]
        freedom = sum(len(logs) - 1 for logs in logs_by_side if len(logs) > 1)
        spread = math.sqrt(sum(pooled) / freedom) if freedom else float("nan")
        tvd = float("nan")
        if default and benchmark in default["self_shares"]:
            p, q = data["self_shares"][benchmark], default["self_shares"][benchmark]
            tvd = 0.5 * sum(abs(p.get(leaf, 0) - q.get(leaf, 0)) for leaf in set(p) | set(q))
        print(f"{name}\t{benchmark}\truns {len(values)}\tmedian {statistics.median(values) / 1e6:.2f} ms"
              f"\tspread {spread:.3f}\tTVD vs default {tvd:.3f}")
