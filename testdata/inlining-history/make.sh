#!/usr/bin/env bash
# A history where V8 changes its mind (issue 53): twelve commits of one
# small suite (bench.mjs: tinybench 6.2.5, two benchmarks), the first eight
# as bench.mjs is, the last four with scale's rarely taken branch grown past
# TurboFan's inlining budget (grow.py), so that from commit 9 on V8 no
# longer inlines scale into sumScaled and `sum scaled` is slower; `sum
# plain` does not call scale. Test data for `v8inline history` (tests/history.rs
# `a_function_v8_stopped_inlining_is_named_with_its_change`), not a test.
#
# results/cNN/ is a side directory of `v8inline bench`: one commit's result
# for `v8inline history add`, RUNS runs (default 3) recorded as a user
# starts the suite (`v8inline record -- npm run bench`), round after round,
# each round every commit once in a shuffled order. Each run keeps
# recording.json, benchmarks.json and each benchmark's profile.folded,
# gzipped.
#
#   testdata/inlining-history/make.sh
#
# Needs perf, npm, node (the one on PATH) and v8inline built
# (target/release/v8inline, or V8INLINE). Works under $WORK
# (/tmp/v8inline-inlining-history).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
v8inline=$(realpath "${V8INLINE:-$repo/target/release/v8inline}")
work=${WORK:-/tmp/v8inline-inlining-history}
runs=${RUNS:-3}
commits=(c01 c02 c03 c04 c05 c06 c07 c08 c09 c10 c11 c12)

rm -rf "$work"
mkdir -p "$work"
for commit in "${commits[@]}"; do
  tree=$work/$commit
  mkdir -p "$tree"
  printf '{"name": "inlining-history", "private": true, "type": "module", "scripts": {"bench": "node bench.mjs"}}\n' >"$tree/package.json"
  if [[ $commit > c08 ]]; then
    python3 "$here/grow.py" "$here/bench.mjs" >"$tree/bench.mjs"
  else
    cp "$here/bench.mjs" "$tree/bench.mjs"
  fi
done
# One install, copied: every commit runs the same tinybench.
(cd "$work/c01" && npm install --no-audit --no-fund --silent --save-exact tinybench@6.2.5)
for commit in "${commits[@]:1}"; do cp -r "$work/c01/node_modules" "$work/c01/package-lock.json" "$work/$commit/"; done

node --version
for commit in "${commits[@]}"; do
  rm -rf "${here:?}/results/$commit"
  mkdir -p "$here/results/$commit"
done
for round in $(seq 1 "$runs"); do
  run=$(printf 'run-%02d' "$round")
  for commit in $(printf '%s\n' "${commits[@]}" | shuf); do
    recording=$work/recordings/$commit/$run
    (cd "$work/$commit" && "$v8inline" record --output-dir "$recording" -- npm run bench >/dev/null)
    out=$here/results/$commit/$run
    mkdir -p "$out"
    cp "$recording/recording.json" "$recording/benchmarks.json" "$out/"
    for folded in "$recording"/benchmarks/*/profile.folded; do
      slug=$(basename "$(dirname "$folded")")
      mkdir -p "$out/benchmarks/$slug"
      gzip -9n <"$folded" >"$out/benchmarks/$slug/profile.folded.gz"
    done
    echo "$commit $run"
  done
done
for commit in "${commits[@]}"; do
  python3 - "$here/results/$commit" "$runs" <<'PY'
import json, sys
side, runs = sys.argv[1], int(sys.argv[2])
body = {"version": 1, "side": "base", "schedule": "interleaved",
        "runs": [{"directory": f"run-{round:02d}", "round": round} for round in range(1, runs + 1)]}
json.dump(body, open(f"{side}/runs.json", "w"))
PY
done
