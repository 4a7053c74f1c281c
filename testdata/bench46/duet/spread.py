#!/usr/bin/env python3
"""Per benchmark of each NAME.times.json (pilot.sh, study.sh): the spread of
the log CPU time per iteration of each side, and of the log ratio head/base,
unpaired (sqrt of the sum of the sides' variances) and paired by round (the
standard deviation of each round's ratio), with the correlation of the
sides' log times by round. A duet is worth it where the paired spread is
well below the unpaired one."""
import json, math, statistics, sys

for path in sys.argv[1:]:
    sides = json.load(open(path))["sides"]
    names = sorted({name for run in sides["base"] for name in run["cpu_per_iteration"]})
    for name in names:
        base = {run["round"]: run["cpu_per_iteration"].get(name) for run in sides["base"]}
        head = {run["round"]: run["cpu_per_iteration"].get(name) for run in sides["head"]}
        rounds = sorted(r for r in set(base) & set(head) if base[r] and head[r])
        log_base = [math.log(base[r]) for r in rounds]
        log_head = [math.log(head[r]) for r in rounds]
        ratios = [h - b for b, h in zip(log_base, log_head)]
        unpaired = math.sqrt(statistics.variance(log_base) + statistics.variance(log_head))
        print(f"{path.rsplit('/', 1)[-1]:38s} {name:30s} rounds {len(rounds):2d}  "
              f"unpaired {unpaired:.3f}  paired {statistics.stdev(ratios):.3f}  "
              f"correlation {statistics.correlation(log_base, log_head):+.2f}  mean log ratio {statistics.mean(ratios):+.3f}")
