#!/usr/bin/env python3
"""Judges the comparisons study.sh kept (testdata/bench52/results/NAME/) with
each candidate statistic, as `bench` would have.

bench judges every benchmark after each round and stops when none is
undecided; the verdicts of that round stand. A statistic is a per-run location (from each run's benchmarks.json) and a way
to combine the rounds' pairs (duets: base and head ran at the same time):

  per run:  cpu     the profile's CPU time per iteration (samples / timings):
                    what bench judges today
            median  the harness's median timing
            min     the harness's fastest timing
            mean    the harness's mean timing
            p75     the harness's 75th percentile
  combined: t       the mean of the rounds' log ratios, paired t interval
            hl      Hodges-Lehmann estimate of the log ratios (the median of
                    their Walsh averages), Wilcoxon signed-rank bounds
                    (Hollander & Wolfe, Nonparametric Statistical Methods,
                    3.2-3.3); below 6 pairs (no 95 % rank interval) t

and two-statistic rules (`@95`: each at 95 % instead): `A+B` decides "regressed" when either does at half
the error rate each (97.5 % intervals), "within noise" when A is within noise
and B's interval lies below +threshold; `A^B` the same, but "within noise"
when A is and B's interval reaches down to no change (B shows no increase);
`A~B` is `A^B` where `auto` chose the fastest timing, A alone elsewhere
(compare's rule, `auto/hl~cpu/t@95`).
`auto` is the harness's fastest timing where every run timed at least
AUTO_LEAST_TIMINGS iterations, else the profile's CPU time per iteration.

    python3 testdata/bench52/judge.py [RESULTS] [--threshold 0.05]

Prints, per statistic and kind of comparison: the verdicts, the rounds it
took, and the median width (minimum detectable change) of the unchanged
ones.
"""
import json
import math
import os
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_ROUNDS = 3


def student_t_quantile(p, df):
    """Student's t quantile by bisection on the regularized incomplete beta."""
    def cdf(t):
        x = df / (df + t * t)
        tail = 0.5 * betainc(df / 2, 0.5, x)
        return 1 - tail if t > 0 else tail
    low, high = -1e3, 1e3
    for _ in range(200):
        middle = (low + high) / 2
        if cdf(middle) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def betainc(a, b, x):
    """Regularized incomplete beta (Numerical Recipes' continued fraction)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x))
    if x > (a + 1) / (a + b + 2):
        return 1 - betainc(b, a, 1 - x)
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            numerator = 1.0
        elif i % 2 == 0:
            numerator = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            numerator = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1 + numerator * d
        d = 1 / (d if abs(d) > 1e-30 else 1e-30)
        c = 1 + numerator / (c if abs(c) > 1e-30 else 1e-30)
        f *= c * d
        if abs(1 - c * d) < 1e-12:
            break
    return front * (f - 1) / a


def paired_t(ratios, confidence):
    n = len(ratios)
    mean = sum(ratios) / n
    if n < 2:
        return mean, -math.inf, math.inf
    sd = math.sqrt(sum((r - mean) ** 2 for r in ratios) / (n - 1))
    half = student_t_quantile(1 - (1 - confidence) / 2, n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def signed_rank_counts(n):
    """How many of the 2^n sign choices give each signed-rank sum W+."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for total, count in enumerate(counts):
            grown[total + rank] += count
        counts = grown
    return counts


def hodges_lehmann(ratios, confidence):
    n = len(ratios)
    if signed_rank_counts(n)[0] / 2 ** n > (1 - confidence) / 2:
        # Too few pairs for any rank interval at this confidence (below 6 at
        # 95 %): the paired mean, as compare does.
        return paired_t(ratios, confidence)
    walsh = sorted((ratios[i] + ratios[j]) / 2 for i in range(n) for j in range(i, n))
    m = len(walsh)
    middle = walsh[m // 2] if m % 2 else (walsh[m // 2 - 1] + walsh[m // 2]) / 2
    counts = signed_rank_counts(n)
    total = 2 ** n
    alpha = 1 - confidence
    # The largest c with P(W+ <= c) <= alpha / 2; the (c+1)-th smallest and
    # (c+1)-th largest Walsh averages bound the interval.
    cumulative, c = 0, -1
    for w, count in enumerate(counts):
        if (cumulative + count) / total > alpha / 2:
            break
        cumulative += count
        c = w
    k = c + 1
    if k < 1:
        return middle, -math.inf, math.inf
    return middle, walsh[k - 1], walsh[m - k]


def verdict(low, high, threshold):
    log_threshold_high, log_threshold_low = math.log(1 + threshold), math.log(1 - threshold)
    # bench judges the change exp(x) - 1 against ±threshold.
    if math.exp(low) - 1 > threshold:
        return "regressed"
    if math.exp(high) - 1 < -threshold:
        return "improved"
    if math.exp(low) - 1 > -threshold and math.exp(high) - 1 < threshold:
        return "within noise"
    return "undecided"


def per_run(benchmark, statistic):
    times = benchmark.get("time_per_iteration") or {}
    if statistic == "cpu":
        count = times.get("samples")
        return benchmark["samples"] / count if count and benchmark.get("samples") else None
    if statistic == "median":
        return times.get("median")
    return times.get(statistic)


def load(directory):
    """Per benchmark, the rounds' (base, head) benchmark entries, in round order."""
    sides = {}
    for side in ("base", "head"):
        runs = json.load(open(os.path.join(directory, side, "runs.json")))["runs"]
        sides[side] = {}
        for run in runs:
            entries = json.load(open(os.path.join(directory, side, run["directory"], "benchmarks.json")))["benchmarks"]
            sides[side][run["round"]] = {entry["name"]: entry for entry in entries}
    rounds = sorted(set(sides["base"]) & set(sides["head"]))
    names = sorted({name for entries in sides["base"].values() for name in entries})
    return {name: [(sides["base"][r].get(name), sides["head"][r].get(name)) for r in rounds] for name in names}


def ratios_of(pairs, statistic):
    ratios = []
    for base, head in pairs:
        if not base or not head:
            continue
        b, h = per_run(base, statistic), per_run(head, statistic)
        if b and h and b > 0 and h > 0:
            ratios.append(math.log(h / b))
    return ratios


# `auto`: the harness's fastest timing where every run of the benchmark timed
# at least this many iterations (its minimum is then a floor the neighbour
# cannot lower), else the profile's CPU time per iteration.
AUTO_LEAST_TIMINGS = 50


def chosen_statistic(pairs, statistic):
    if statistic != "auto":
        return statistic
    counts = [((entry or {}).get("time_per_iteration") or {}).get("samples") or 0 for pair in pairs for entry in pair]
    return "min" if counts and min(counts) >= AUTO_LEAST_TIMINGS else "cpu"


def judge_single(pairs, statistic, method, threshold, confidence=0.95):
    ratios = ratios_of(pairs, chosen_statistic(pairs, statistic))
    if len(ratios) < 2:
        return "undecided", (math.nan, -math.inf, math.inf)
    interval = (paired_t if method == "t" else hodges_lehmann)(ratios, confidence)
    return verdict(interval[1], interval[2], threshold), interval


def judge(pairs, rule, threshold):
    confidence = 0.975
    if "@" in rule:
        rule, level = rule.split("@")
        confidence = float(level) / 100
    if "~" in rule:
        # compare's rule: the guard only where the fastest timing was chosen.
        first, guard = rule.split("~")
        statistic, method = first.split("/")
        if chosen_statistic(pairs, statistic) != "min":
            return judge_single(pairs, statistic, method, threshold, confidence=confidence)
        rule = f"{first}^{guard}"
    if "^" in rule:
        # The guard against a change the primary statistic cannot see (a
        # cost on some iterations only): regressed when either is, at half
        # the error rate each; within noise when the primary is and the
        # guard shows no increase at all (its interval reaches down to 0).
        first, guard = rule.split("^")
        primary, interval = judge_single(pairs, *first.split("/"), threshold, confidence=confidence)
        guarded, guard_interval = judge_single(pairs, *guard.split("/"), threshold, confidence=confidence)
        if primary == "regressed" or guarded == "regressed":
            return "regressed", interval
        if primary == "within noise" and guard_interval[1] <= 0:
            return "within noise", interval
        if primary == "improved" and guard_interval[1] <= 0:
            return "improved", interval
        return "undecided", interval
    if "+" not in rule:
        statistic, method = rule.split("/")
        return judge_single(pairs, statistic, method, threshold)
    first, guard = rule.split("+")
    primary, interval = judge_single(pairs, *first.split("/"), threshold, confidence=0.975)
    guarded, guard_interval = judge_single(pairs, *guard.split("/"), threshold, confidence=0.975)
    if primary == "regressed" or guarded == "regressed":
        return "regressed", interval
    if primary == "within noise" and math.exp(guard_interval[2]) - 1 < threshold:
        return "within noise", interval
    if primary == "improved" and guarded != "regressed":
        return "improved", interval
    return "undecided", interval


def sequential(benchmarks, rule, threshold):
    """bench's way: after each round from MIN_ROUNDS on every benchmark is
    judged over all rounds so far; it stops when none is undecided (or at the
    last round the comparison ran), and the verdicts at that round stand.
    Returns {benchmark: (verdict, rounds, interval)}."""
    rounds_run = min(len(pairs) for pairs in benchmarks.values())
    for rounds in range(MIN_ROUNDS, rounds_run + 1):
        judged = {name: judge(pairs[:rounds], rule, threshold) for name, pairs in benchmarks.items()}
        if rounds == rounds_run or all(verdict != "undecided" for verdict, _ in judged.values()):
            return {name: (verdict, rounds, interval) for name, (verdict, interval) in judged.items()}
    return {}


RULES = [
    "auto/t", "auto/hl", "auto/hl+cpu/t", "auto/t+cpu/t", "auto/t^cpu/t", "auto/t^cpu/t@95", "auto/hl^cpu/t", "auto/hl^cpu/t@95", "auto/hl~cpu/t@95",
    "cpu/t", "median/t", "mean/t", "min/t", "p75/t",
    "cpu/hl", "median/hl", "mean/hl", "min/hl", "p75/hl",
    "median/hl+mean/t", "min/hl+mean/t", "median/hl+cpu/t", "median/t+mean/t",
]


def main():
    arguments = sys.argv[1:]
    threshold = 0.05
    if "--threshold" in arguments:
        at = arguments.index("--threshold")
        threshold = float(arguments[at + 1])
        del arguments[at:at + 2]
    results = arguments[0] if arguments else os.path.join(HERE, "results")
    # A comparison still running has no runs.json yet.
    comparisons = sorted(
        name for name in os.listdir(results) if os.path.isfile(os.path.join(results, name, "head", "runs.json"))
    )
    loaded = {name: load(os.path.join(results, name)) for name in comparisons}
    for rule in RULES:
        print(f"== {rule} at ±{threshold:.0%}")
        by_kind = defaultdict(Counter)
        by_benchmark = defaultdict(Counter)
        rounds_by_kind = defaultdict(list)
        widths = []
        gate = Counter()
        for name, benchmarks in loaded.items():
            kind = name.rsplit("-", 1)[0]
            regressed = False
            for benchmark, (judged, rounds, (_, low, high)) in sequential(benchmarks, rule, threshold).items():
                by_kind[kind][judged] += 1
                by_benchmark[(kind, benchmark)][judged] += 1
                rounds_by_kind[kind].append(rounds)
                regressed |= judged == "regressed"
                if kind == "unchanged" and math.isfinite(high - low):
                    widths.append((math.exp(high) - math.exp(low)) / 2)
            gate[kind] += regressed
        for kind in sorted(by_kind):
            count = sum(1 for name in loaded if name.rsplit("-", 1)[0] == kind)
            rounds = sorted(rounds_by_kind[kind])
            print(f"  {kind}: {count} comparisons, gate fails {gate[kind]}; verdicts {dict(by_kind[kind])}; "
                  f"rounds median {rounds[len(rounds) // 2]} (range {rounds[0]}-{rounds[-1]})")
        for (kind, benchmark), verdicts in sorted(by_benchmark.items()):
            print(f"    {kind} / {benchmark}: {dict(verdicts)}")
        if widths:
            widths.sort()
            print(f"  unchanged: interval half-width median {widths[len(widths) // 2]:.1%} "
                  f"(range {widths[0]:.1%}-{widths[-1]:.1%})")


if __name__ == "__main__":
    main()
