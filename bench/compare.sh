#!/usr/bin/env bash
# Times `v8inline compare` of two 5-second recordings, as CI runs it on a
# pull request (markdown, then annotations with --fail-on-regression, then
# a differential flame graph): testdata/compare/record.sh's program
# recorded for MILLIS (5000) ms at base and at head into a scratch
# directory, then each compare run RUNS (10) times; prints the median and
# the slowest wall time of each.
#
#   bench/compare.sh
#
# Needs what testdata/compare/record.sh needs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
v8inline=${V8INLINE:-$repo/target/release/v8inline}
runs=${RUNS:-10}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
OUT=$scratch PAIRS=0 MILLIS=${MILLIS:-5000} "$repo/testdata/compare/record.sh" >/dev/null 2>&1
base=$scratch/recordings/base head=$scratch/recordings/head
echo "base: $(zcat "$base/profile.folded.gz" | wc -l) stacks, head: $(zcat "$head/profile.folded.gz" | wc -l) stacks"
measure() {
  local name=$1
  shift
  local times=()
  for _ in $(seq 1 "$runs"); do
    local start end
    start=$(date +%s%N)
    "$v8inline" compare "$base" "$head" "$@" >/dev/null || true
    end=$(date +%s%N)
    times+=($(((end - start) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v name="$name" '{ t[NR] = $1 } END { printf "%-40s median %d ms, slowest %d ms\n", name, t[int((NR + 1) / 2)], t[NR] }'
}
measure "--format markdown" --format markdown
measure "--format github --fail-on-regression" --format github --fail-on-regression
measure "--flamegraph" --flamegraph "$scratch/diff.svg"
