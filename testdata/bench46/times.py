#!/usr/bin/env python3
"""Small outputs of one `v8inline bench` directory (study.sh): each run's CPU
time per iteration per benchmark (ns: the benchmark's folded weight over the
iterations tinybench timed, as v8inline computes it), and each benchmark's
self shares of its 40 heaviest leaf functions over all runs of both sides
(for the flags' TVD)."""
import gzip, json, os, sys
from collections import Counter

out = sys.argv[1]

def folded(directory):
    plain = os.path.join(directory, "profile.folded")
    if os.path.exists(plain):
        return open(plain, encoding="utf-8", errors="replace")
    return gzip.open(plain + ".gz", "rt", encoding="utf-8", errors="replace")

result = {"sides": {}, "self_shares": {}}
leaves = {}
for side in ("base", "head"):
    runs_path = os.path.join(out, side, "runs.json")
    if not os.path.exists(runs_path):
        continue
    runs = []
    for run in json.load(open(runs_path))["runs"]:
        directory = os.path.join(out, side, run["directory"])
        benchmarks = json.load(open(os.path.join(directory, "benchmarks.json")))["benchmarks"]
        times = {}
        for benchmark in benchmarks:
            weight = 0
            counter = leaves.setdefault(benchmark["name"], Counter())
            with folded(os.path.join(directory, benchmark["directory"])) as lines:
                for line in lines:
                    stack, _, count = line.rstrip("\n").rpartition(" ")
                    if not stack:
                        continue
                    weight += int(count)
                    counter[stack.rsplit(";", 1)[-1]] += int(count)
            iterations = (benchmark.get("time_per_iteration") or {}).get("samples") or 0
            times[benchmark["name"]] = weight / iterations if iterations and benchmark.get("samples") else None
        runs.append({"directory": run["directory"], "round": run["round"], "cpu_per_iteration": times})
    result["sides"][side] = runs
for name, counter in leaves.items():
    total = sum(counter.values()) or 1
    result["self_shares"][name] = {leaf: round(weight / total, 5) for leaf, weight in counter.most_common(40)}
json.dump(result, sys.stdout, indent=1, sort_keys=True)
print()
