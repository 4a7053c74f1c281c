#!/usr/bin/env python3
"""Shrinks the kept benchmarks.json files of results/ to what judge.py and
tests/bench.rs read (each benchmark's name, harness, samples,
time_per_iteration and timings), one line each: study.sh keeps every run's,
and the whole run's windows and root frames would triple the results.

    python3 testdata/bench52/compact.py [RESULTS]
"""
import json
import os
import sys

KEPT = ("name", "harness", "samples", "time_per_iteration", "timings")
results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
for root, _, files in os.walk(results):
    if "benchmarks.json" not in files:
        continue
    path = os.path.join(root, "benchmarks.json")
    data = json.load(open(path))
    data["benchmarks"] = [{key: entry[key] for key in KEPT if key in entry} for entry in data["benchmarks"]]
    with open(path + ".new", "w") as output:
        json.dump(data, output, separators=(",", ":"))
        output.write("\n")
    os.replace(path + ".new", path)
