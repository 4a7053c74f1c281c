#!/usr/bin/env python3
"""Reads results/ (make.sh) and prints, in markdown, what README.md's tables
are made of:

- each benchmark's time per iteration per release: the median over the
  release's runs of tinybench's median (benchmarks.json's
  time_per_iteration.median);
- the fastest iteration (time_per_iteration.min, median of the runs) and
  the CPU time per iteration (the benchmark's profile samples, perf's
  periods in ns, over the iterations tinybench timed, median of the runs);
- each benchmark's top functions by own CPU time per iteration per release:
  the samples whose innermost JavaScript frame is the function (the V8
  builtins, runtime functions and regular expression code it called are
  charged to it, as `compare` charges them; a stack without JavaScript to its
  leaf) in the benchmark's profile.folded.gz, over the iterations tinybench
  timed in the run (time_per_iteration.samples), the median over the runs. A
  function is its name and file under node_modules (lines move between
  releases), its inlined (_[i]) and compiled (_[j]) frames merged;
- for each pair of consecutive releases, each benchmark's function whose own
  time per iteration moved most.

    python3 testdata/history/summarize.py [RESULTS] [--top N]
"""
import gzip
import json
import os
import re
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
top = 5
if "--top" in args:
    at = args.index("--top")
    top = int(args[at + 1])
    del args[at:at + 2]
results = args[0] if args else os.path.join(here, "results")
releases = [r["version"] for r in json.load(open(os.path.join(here, "releases.json")))["releases"]]


def function(frame):
    frame = re.sub(r"_\[[ijk]\]$", "", frame)
    match = re.match(r"JS:[*^~+]?(\S*) (\S+):\d+:\d+$", frame)
    if not match:
        return frame
    name, path = match.groups()
    path = path.split("node_modules/", 1)[1] if "node_modules/" in path else os.path.basename(path)
    return f"{name or '(anonymous)'} {path}"


def runs(version):
    side = os.path.join(results, version)
    listed = json.load(open(os.path.join(side, "runs.json")))["runs"]
    return [os.path.join(side, run["directory"]) for run in listed]


# data[version][benchmark] = {"median": [...], "self": [{function: ns per iteration}, ...]}
data = {}
names = []
for version in releases:
    data[version] = {}
    for run in runs(version):
        for bench in json.load(open(os.path.join(run, "benchmarks.json")))["benchmarks"]:
            if bench["name"] not in names:
                names.append(bench["name"])
            entry = data[version].setdefault(bench["name"], {"median": [], "self": []})
            timing = bench["time_per_iteration"]
            entry["median"].append(timing["median"])
            entry.setdefault("min", []).append(timing["min"])
            entry.setdefault("cpu", []).append(0)
            own = {}
            with gzip.open(os.path.join(run, bench["directory"], "profile.folded.gz"), "rt") as folded:
                for line in folded:
                    stack, count = line.rstrip("\n").rsplit(" ", 1)
                    frames = stack.split(";")
                    js = [frame for frame in frames[1:] if frame.startswith("JS:")]
                    leaf = function(js[-1] if js else frames[-1])
                    own[leaf] = own.get(leaf, 0) + int(count)
                    entry["cpu"][-1] += int(count) / timing["samples"]
            entry["self"].append({leaf: ns / timing["samples"] for leaf, ns in own.items()})


def own_median(version, name, leaf):
    return statistics.median(run.get(leaf, 0.0) for run in data[version][name]["self"])


def ms(ns):
    return f"{ns / 1e6:.2f}"


for key, title in (("median", "Time per iteration (ms, tinybench's median, median of the runs)"),
                   ("min", "Fastest iteration (ms, tinybench's min, median of the runs)"),
                   ("cpu", "CPU time per iteration (ms, the profile's samples over the iterations, median of the runs)")):
    print(f"## {title}\n")
    print("| release | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for version in releases:
        print(f"| {version} | " + " | ".join(ms(statistics.median(data[version][n][key])) for n in names) + " |")
    print()

for name in names:
    leaves = {}
    for version in releases:
        for run in data[version][name]["self"]:
            for leaf in run:
                leaves[leaf] = max(leaves.get(leaf, 0.0), own_median(version, name, leaf))
    chosen = sorted(leaves, key=leaves.get, reverse=True)[:top]
    print(f"## {name}: own CPU time per iteration (ms, median of the runs), top {top}\n")
    print("| release | " + " | ".join(f"`{leaf}`" for leaf in chosen) + " |")
    print("|---|" + "---:|" * len(chosen))
    for version in releases:
        print(f"| {version} | " + " | ".join(ms(own_median(version, name, leaf)) for leaf in chosen) + " |")
    print()

# The functions README.md follows: (benchmark, function, column title).
SELECTED = [
    ("parse svg", "replaceEntitiesValue fast-xml-parser/src/xmlparser/OrderedObjParser.js", "svg: replaceEntitiesValue"),
    ("parse feed", "toString path-expression-matcher/src/Matcher.js", "feed: Matcher toString"),
    ("parse svg", "readTagExp fast-xml-parser/src/xmlparser/OrderedObjParser.js", "svg: readTagExp"),
    ("parse svg", "parseXml fast-xml-parser/src/xmlparser/OrderedObjParser.js", "svg: parseXml"),
    ("parse svg", "decode @nodable/entities/src/EntityDecoder.js", "svg: decode"),
    ("validate svg", "getAllMatches fast-xml-parser/src/util.js", "validate: getAllMatches"),
    ("parse svg", "tagExpWithClosingIndex fast-xml-parser/src/xmlparser/OrderedObjParser.js", "svg: tagExpWithClosingIndex"),
    ("parse svg", "getAllMatches fast-xml-parser/src/util.js", "svg: getAllMatches"),
]
print("## The functions that moved: own CPU time per iteration (ms, median of the runs)\n")
print("| release | " + " | ".join(title for _, _, title in SELECTED) + " |")
print("|---|" + "---:|" * len(SELECTED))
for version in releases:
    print(f"| {version} | " + " | ".join(ms(own_median(version, name, leaf)) for name, leaf, _ in SELECTED) + " |")
print()

print("## Largest move of a function's own time per iteration between consecutive releases\n")
print("| from | to | benchmark | time per iteration | function | own time |")
print("|---|---|---|---:|---|---:|")
for before, after in zip(releases, releases[1:]):
    for name in names:
        leaves = set()
        for version in (before, after):
            for run in data[version][name]["self"]:
                leaves.update(run)
        moves = {leaf: own_median(after, name, leaf) - own_median(before, name, leaf) for leaf in leaves}
        leaf = max(moves, key=lambda leaf: abs(moves[leaf]))
        t0 = statistics.median(data[before][name]["median"])
        t1 = statistics.median(data[after][name]["median"])
        print(f"| {before} | {after} | {name} | {ms(t0)} → {ms(t1)} ({(t1 / t0 - 1) * 100:+.0f} %) | `{leaf}` | "
              f"{ms(own_median(before, name, leaf))} → {ms(own_median(after, name, leaf))} |")
