#!/usr/bin/env bash
# Measures compare's false alarms on the unchanged pairs of
# testdata/compare/recordings (record.sh): for each pair, whether
# `compare --fail-on-regression` exits 1 on the recordings (judged by the
# benchmark's time per iteration) and on their folded stacks alone (judged
# by the functions' self shares), and the largest self-share change of any
# JavaScript function (SHARE_FLOOR in src/output/compare/noise.rs is set
# above what the binomial model does not explain).
#
#   testdata/compare/false-alarms.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
v8inline=${V8INLINE:-$here/../../target/release/v8inline}
alarms=0 profile_alarms=0 pairs=0 largest=0
for a in "$here"/recordings/unchanged-*-a; do
  b=${a%-a}-b
  pairs=$((pairs + 1))
  status=0
  "$v8inline" compare "$a" "$b" --fail-on-regression >/dev/null || status=$?
  [ "$status" = 1 ] && alarms=$((alarms + 1))
  profile_status=0
  "$v8inline" compare "$a/profile.folded.gz" "$b/profile.folded.gz" --fail-on-regression >/dev/null || profile_status=$?
  [ "$profile_status" = 1 ] && profile_alarms=$((profile_alarms + 1))
  # The largest |self Δ| of a function with a script (a location column).
  change=$("$v8inline" compare "$a" "$b" --top 100000 |
    awk '$1 ~ /^[+-][0-9.]+$/ && $2 == "pp" && $NF ~ /:[0-9]+$/ { v = $1 < 0 ? -$1 : $1; if (v > m) m = v } END { print m + 0 }')
  echo "$(basename "${a%-a}"): exit $status (benchmark), $profile_status (profile), largest JavaScript self change ${change} pp"
  largest=$(awk -v a="$largest" -v b="$change" 'BEGIN { print (b > a) ? b : a }')
done
echo "$alarms of $pairs unchanged pairs raised a benchmark regression, $profile_alarms a profile regression; largest JavaScript self change ${largest} pp"
