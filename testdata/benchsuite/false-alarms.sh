#!/usr/bin/env bash
# Measures compare's false alarms on the ten unchanged pairs of
# testdata/benchsuite/noise (and base-1 vs base-2), and whether it sees the
# head's regression: for each pair, the exit status of
# `compare --fail-on-regression`, the number of `::warning` annotations of
# `--format github`, each benchmark's change of CPU time per iteration and
# of the wall-clock median, and the largest self-share change of a
# JavaScript function with its |z| (docs/compare.md states the rule these
# figures chose).
#
#   testdata/benchsuite/false-alarms.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
v8inline=${V8INLINE:-$here/../../target/release/v8inline}
alarms=0 warned=0 pairs=0
judge() {
  local name=$1 base=$2 head=$3 status=0
  "$v8inline" compare "$base" "$head" --fail-on-regression >/dev/null || status=$?
  local warnings
  warnings=$("$v8inline" compare "$base" "$head" --format github | grep -c '^::warning' || true)
  # Each benchmark's time line: `… CPU per iteration, +1.7% (noise ± 21.1%); wall median +12.1%, …`.
  local times
  times=$("$v8inline" compare "$base" "$head" |
    sed -n 's/^benchmark "parse \([^"]*\)": .* per iteration, \([^ ]*\) (noise ± \([^)]*\)); wall median \([^,]*\),.*: \(.*\)$/\1 cpu \2 (±\3) wall \4 \5/p' | paste -sd ';' -)
  # The largest |self Δ| of a function with a script, and its noise band.
  local largest
  largest=$("$v8inline" compare "$base" "$head" --top 100000 |
    awk '$1 ~ /^[+-][0-9.]+$/ && $2 == "pp" && $NF ~ /:[0-9]+$/ { v = $1 < 0 ? -$1 : $1; if (v > m) { m = v; n = $3 } } END { printf "%s pp (band %s)", m + 0, n }')
  echo "$name: exit $status, $warnings warnings; $times; largest JavaScript self change $largest"
}
judge "base-1 vs base-2" "$here/base-1" "$here/base-2"
for a in "$here"/noise/pair-*-a; do
  b=${a%-a}-b
  pairs=$((pairs + 1))
  line=$(judge "$(basename "${a%-a}")" "$a" "$b")
  echo "$line"
  case $line in *": exit 1,"*) alarms=$((alarms + 1)) ;; esac
  case $line in *", 0 warnings;"*) ;; *) warned=$((warned + 1)) ;; esac
done
judge "base-1 vs head (the regression)" "$here/base-1" "$here/head"
judge "base-2 vs head (the regression)" "$here/base-2" "$here/head"
echo "$alarms of $pairs unchanged pairs raised a regression (exit 1), $warned an annotation"
