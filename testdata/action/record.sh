#!/usr/bin/env bash
# Records the Action's test suite (bench.mjs: tinybench 6.2.5, three tasks;
# tests/action.rs runs the same file live) for the verdicts tests/action.rs
# asserts on committed data, where noise cannot flip them:
#
#   base/        bench.mjs as is (checksum does one round)
#   slower/      checksum does three rounds (the head of the regression)
#   unchanged/   bench.mjs as is again, in another tree (the head of a
#                pull request that changes no code)
#
# Each is what `v8inline bench` writes for a side: a side directory with
# runs.json and one `record` directory per run (RUNS, default 3), of which
# are kept recording.json, benchmarks.json and each benchmark's
# profile.folded, gzipped. The three trees take turns in each round, in a
# random order, as `v8inline bench` runs base and head.
#
#   testdata/action/record.sh
#
# Needs perf, npm, and v8inline built (target/release/v8inline, or V8INLINE).
# Uses the node on PATH (as the test does). The runs happen under
# /tmp/v8inline-action/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
v8inline=${V8INLINE:-$repo/target/release/v8inline}
work=${WORK:-/tmp/v8inline-action}
runs=${RUNS:-3}

rm -rf "$work"
mkdir -p "$work"
for tree in base slower unchanged; do
  mkdir -p "$work/$tree"
  printf '{"name": "suite", "private": true, "type": "module"}\n' >"$work/$tree/package.json"
  (cd "$work/$tree" && npm install --no-audit --no-fund --silent tinybench@6.2.5)
  if [ "$tree" = slower ]; then
    sed 's/^const ROUNDS = 1;$/const ROUNDS = 3;/' "$here/bench.mjs" >"$work/$tree/bench.mjs"
  else
    cp "$here/bench.mjs" "$work/$tree/bench.mjs"
  fi
done
grep -q 'const ROUNDS = 3;' "$work/slower/bench.mjs"

node --version
for tree in base slower unchanged; do
  rm -rf "${here:?}/$tree"
  mkdir -p "$here/$tree"
done
for round in $(seq 1 "$runs"); do
  run=$(printf 'run-%02d' "$round")
  for tree in $(printf '%s\n' base slower unchanged | shuf); do
    recording=$work/recordings/$tree/$run
    (cd "$work/$tree" && "$v8inline" record --output-dir "$recording" -- node bench.mjs >/dev/null)
    out=$here/$tree/$run
    mkdir -p "$out"
    cp "$recording/recording.json" "$recording/benchmarks.json" "$out/"
    for folded in "$recording"/benchmarks/*/profile.folded; do
      slug=$(basename "$(dirname "$folded")")
      mkdir -p "$out/benchmarks/$slug"
      gzip -9n <"$folded" >"$out/benchmarks/$slug/profile.folded.gz"
    done
    echo "round $round: $tree"
  done
done
for tree in base slower unchanged; do
  python3 - "$here/$tree" "$tree" "$runs" <<'PYTHON'
import json, sys
directory, side, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
listing = {"version": 1, "side": side,
           "runs": [{"directory": f"run-{n:02d}", "round": n} for n in range(1, runs + 1)]}
with open(f"{directory}/runs.json", "w") as file:
    json.dump(listing, file, indent=2)
    file.write("\n")
PYTHON
done
du -sh "$here"
