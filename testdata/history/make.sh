#!/usr/bin/env bash
# A real release history for `v8inline history` (issue 53): 22 consecutive
# releases of fast-xml-parser (5.5.8 to 5.12.1) standing for 22 commits on
# main, one suite (bench.mjs: tinybench 6.2.5, four benchmarks on generated
# documents) recorded 9 times per release (rounds 1-3, then FIRST_ROUND=4
# ROUNDS=9). Test data, not a test.
#
# Each release is installed into its own directory under $WORK with a tiny
# package.json whose `bench` script runs bench.mjs (`v8inline record -- npm
# run bench`, as a user starts it): fast-xml-parser pinned to the release and
# its own dependencies resolved as they stood when it was published (npm's
# --before, its publish time and ten minutes), then tinybench pinned (6.2.5, added to the same
# lock file; later than most releases, so not under --before). The lock file is
# kept as results/VERSION/package-lock.json and reused (`npm ci`) on a rerun.
#
# results/VERSION/ is laid out as a side directory of `v8inline bench`, one
# commit's result for `v8inline history add`:
#
#   results/VERSION/runs.json   {"version":1,"side":"base","schedule":"interleaved",
#                                "runs":[{"directory":"run-01","round":1},...]}
#   results/VERSION/run-0N/     a `record` directory: recording.json,
#                               benchmarks.json, benchmarks/NAME/profile.folded.gz
#                               (everything else record writes is removed)
#
# The runs go round after round: round N records every release once, in an
# order shuffled by the round's number, so a machine that drifts slower or
# faster over the hour hits every release alike. releases.json lists the
# releases in order with their publish dates (npm view ... time).
#
#   testdata/history/make.sh [install|run|compare|all]   (default: all)
#   FIRST_ROUND=4 ROUNDS=6 testdata/history/make.sh run   (three more rounds)
#
# compare writes compare.txt: `v8inline compare --top 5` of each pair of
# consecutive releases.
#
# Needs perf, npm, node (/usr/bin/node, node 20) and v8inline built
# (target/release/v8inline, or V8INLINE).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
v8inline=$(realpath "${V8INLINE:-$repo/target/release/v8inline}") # compare runs it from $here
work=${WORK:-/tmp/v8inline-history}
results=${RESULTS:-$here/results}
rounds=${ROUNDS:-3}
# Rounds first_round..rounds are recorded: FIRST_ROUND=4 ROUNDS=6 adds three
# rounds to a history recorded before, leaving rounds 1-3 as they are.
first_round=${FIRST_ROUND:-1}
package=fast-xml-parser
tinybench=6.2.5
releases=(5.5.8 5.5.9 5.5.10 5.5.11 5.5.12 5.6.0 5.7.0 5.7.1 5.7.2 5.7.3 5.8.0
  5.9.0 5.9.1 5.9.2 5.9.3 5.10.0 5.10.1 5.11.0 5.11.1 5.11.2 5.12.0 5.12.1)
mkdir -p "$work" "$results"

# releases.json: the releases in order, each with its publish time.
if [ ! -f "$here/releases.json" ]; then
  npm view "$package" time --json >"$work/time.json"
  python3 - "$work/time.json" "$package" "${releases[@]}" >"$here/releases.json" <<'PY'
import json, sys
times = json.load(open(sys.argv[1]))
rows = [{"version": v, "published": times[v]} for v in sys.argv[3:]]
print(json.dumps({"package": sys.argv[2], "releases": rows}, indent=1))
PY
fi
# Ten minutes after the release was published: a release's dependency bumped
# for it is often published seconds after it (npm's times are the registry's).
before() {
  python3 -c '
import datetime, json, sys
published = next(r["published"] for r in json.load(open(sys.argv[1]))["releases"] if r["version"] == sys.argv[2])
print((datetime.datetime.fromisoformat(published) + datetime.timedelta(minutes=10)).isoformat())' "$here/releases.json" "$1"
}

# $WORK/VERSION: the suite with the release installed.
install() {
  local version=$1
  local dir=$work/$version lock=$results/$version/package-lock.json
  [ -f "$dir/.ready" ] && return 0
  rm -rf "$dir"
  mkdir -p "$dir" "$results/$version"
  cp "$here/bench.mjs" "$dir/"
  cat >"$dir/package.json" <<JSON
{
  "name": "history-fast-xml-parser-$version",
  "private": true,
  "type": "module",
  "scripts": {
    "bench": "node bench.mjs"
  }
}
JSON
  if [ -f "$lock" ]; then
    cp "$lock" "$dir/"
    # npm ci wants the dependencies in package.json too: npm install writes them.
    (cd "$dir" && npm pkg set "dependencies.$package=$version" "dependencies.tinybench=$tinybench" &&
      npm ci --ignore-scripts --no-audit --no-fund --silent)
  else
    (cd "$dir" &&
      npm install --ignore-scripts --no-audit --no-fund --silent --save-exact --before="$(before "$version")" "$package@$version" &&
      npm install --ignore-scripts --no-audit --no-fund --silent --save-exact "tinybench@$tinybench")
    cp "$dir/package-lock.json" "$lock"
  fi
  touch "$dir/.ready"
}

# One run of a release: record it, keep what compare and history read.
run() {
  local version=$1 round=$2
  local out=$results/$version/run-$(printf %02d "$round")
  rm -rf "$out"
  if ! (cd "$work/$version" && "$v8inline" record --output-dir "$out" -- npm run bench) >"$work/$version.run-$round.log" 2>&1; then
    echo "$version round $round failed: $work/$version.run-$round.log" >&2
    return 1
  fi
  find "$out" -mindepth 1 -maxdepth 1 ! -name benchmarks ! -name benchmarks.json ! -name recording.json -exec rm -rf {} +
  find "$out/benchmarks" -type f ! -name profile.folded -delete
  find "$out/benchmarks" -name profile.folded -exec gzip -9 -n {} +
  echo "$version round $round: $(grep -c 'v8inline: benchmark ' "$work/$version.run-$round.log") benchmarks"
}

# runs.json of a release: the runs it has, in the order they ran (by round).
runs_json() {
  local version=$1
  python3 - "$results/$version" <<'PY'
import json, os, sys
side = sys.argv[1]
runs = sorted(d for d in os.listdir(side) if d.startswith("run-") and os.path.exists(os.path.join(side, d, "benchmarks.json")))
body = {"version": 1, "side": "base", "schedule": "interleaved",
        "runs": [{"directory": d, "round": int(d[4:])} for d in runs]}
json.dump(body, open(os.path.join(side, "runs.json"), "w"))
PY
}

# compare.txt: `v8inline compare` of each pair of consecutive releases.
compare_all() {
  local before="" version
  : >"$here/compare.txt"
  for version in "${releases[@]}"; do
    if [ -n "$before" ]; then
      echo "## v8inline compare results/$before results/$version" >>"$here/compare.txt"
      (cd "$here" && "$v8inline" compare --top 5 "results/$before" "results/$version") >>"$here/compare.txt" 2>&1 || true
      echo >>"$here/compare.txt"
    fi
    before=$version
  done
}

what=${1:-all}
if [ "$what" = install ] || [ "$what" = all ]; then
  for version in "${releases[@]}"; do install "$version"; done
fi
if [ "$what" = run ] || [ "$what" = all ]; then
  node --version
  for round in $(seq "$first_round" "$rounds"); do
    order=$(python3 -c 'import random, sys; r = sys.argv[2:]; random.Random(int(sys.argv[1])).shuffle(r); print(" ".join(r))' "$round" "${releases[@]}")
    for version in $order; do run "$version" "$round"; done
  done
  for version in "${releases[@]}"; do runs_json "$version"; done
fi
if [ "$what" = compare ] || [ "$what" = all ]; then compare_all; fi
