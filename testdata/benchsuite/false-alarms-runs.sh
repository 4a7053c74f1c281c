#!/usr/bin/env bash
# compare over several runs per side on unchanged code: the 22 recordings of
# the published yaml (base-1, base-2 and the 10 noise pairs) grouped into
# side directories (runs.json, as `v8inline bench` writes them): for
# i = 1..11, base = 5 consecutive "a" recordings from the i-th, head = the
# 5 "b" recordings beside them (rotating over the 11). Prints each
# comparison's verdicts, exit status of --fail-on-regression, annotations,
# and how many functions the own-time rule judged beyond noise.
#
#   testdata/benchsuite/false-alarms-runs.sh [RUNS_PER_SIDE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
v8inline=${V8INLINE:-$here/../../target/release/v8inline}
per_side=${1:-5}
a=("$here/base-1") b=("$here/base-2")
for pair in 01 02 03 04 05 06 07 08 09 10; do
  a+=("$here/noise/pair-$pair-a") b+=("$here/noise/pair-$pair-b")
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
side() { # side DIR RECORDING...
  local directory=$1 entries="" round=0
  shift
  mkdir -p "$directory"
  for recording in "$@"; do
    round=$((round + 1))
    entries="$entries${entries:+,}{\"directory\":\"$recording\",\"round\":$round}"
  done
  printf '{"version":1,"side":"%s","runs":[%s]}\n' "$(basename "$directory")" "$entries" >"$directory/runs.json"
}
alarms=0 warned=0 undecided=0 functions=0 comparisons=0
for start in $(seq 0 10); do
  base=() head=()
  for offset in $(seq 0 $((per_side - 1))); do
    index=$(((start + offset) % 11))
    base+=("${a[$index]}") head+=("${b[$index]}")
  done
  side "$work/$start/base" "${base[@]}"
  side "$work/$start/head" "${head[@]}"
  status=0
  "$v8inline" compare "$work/$start/base" "$work/$start/head" --fail-on-regression >"$work/$start/text" || status=$?
  warnings=$("$v8inline" compare "$work/$start/base" "$work/$start/head" --format github | grep -c '^::warning' || true)
  verdicts=$(sed -n 's/^benchmark "parse \([^"]*\)": .* per iteration (medians of runs), \(.*\): \(.*\)$/\1 \2: \3/p' "$work/$start/text" | paste -sd ';' -)
  beyond=$("$v8inline" compare "$work/$start/base" "$work/$start/head" --top 100000 | grep -cE '  (regressed|improved)( |$)' || true)
  echo "comparison $((start + 1)): exit $status, $warnings warnings, $beyond functions beyond noise; $verdicts"
  comparisons=$((comparisons + 1))
  [ "$status" = 0 ] || alarms=$((alarms + 1))
  [ "$warnings" = 0 ] || warned=$((warned + 1))
  functions=$((functions + beyond))
  undecided=$((undecided + $(grep -c ': undecided$' "$work/$start/text" || true)))
done
echo "$alarms of $comparisons unchanged comparisons ($per_side runs per side) raised a regression (exit 1), $warned an annotation; $functions function verdicts beyond noise; $undecided benchmark verdicts undecided"
