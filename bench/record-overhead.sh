#!/usr/bin/env bash
# record's own time: `v8inline record -- node app.mjs MILLIS` (prettier
# formatting its own sources, testdata/esmapp/app.mjs, in the directory
# testdata/esmapp/record.sh installs it into) against `perf record` of the
# same command with the same node flags, the median of RUNS each,
# alternating. record's overhead is the difference: checking perf and the
# node's flags before, and after the command exits reading the recording
# and writing its four outputs.
#
#   bench/record-overhead.sh            (MILLIS=5000 RUNS=3 NODE=node V8INLINE=target/release/v8inline)
#
# Needs perf (`perf record -e cpu-clock`), node, and /tmp/v8inline-esmapp
# (testdata/esmapp/record.sh makes it; prettier is installed there).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
millis=${MILLIS:-5000}
runs=${RUNS:-3}
node=$(command -v "${NODE:-node}")
v8inline=${V8INLINE:-$here/target/release/v8inline}
work=/tmp/v8inline-esmapp
[ -f "$work/node_modules/prettier/index.mjs" ] || { echo "run testdata/esmapp/record.sh first" >&2; exit 1; }
cd "$work"

seconds() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

perf_times=()
record_times=()
for run in $(seq "$runs"); do
  rm -rf perf-only record-out && mkdir perf-only
  start=$(seconds)
  (cd perf-only && perf record -q -e cpu-clock -k mono -g -F 997 -o perf.data -- "$node" --perf-prof --log-code \
    --interpreted-frames-native-stack --logfile=codspeed-v8-%p.log --logfile-per-isolate ../app.mjs "$millis" >/dev/null)
  perf_times+=("$(elapsed "$start" "$(seconds)")")
  start=$(seconds)
  "$v8inline" record --output-dir record-out -- "$node" app.mjs "$millis" >/dev/null 2>record.log
  record_times+=("$(elapsed "$start" "$(seconds)")")
done
perf_median=$(printf '%s\n' "${perf_times[@]}" | median)
record_median=$(printf '%s\n' "${record_times[@]}" | median)
echo "node $("$node" --version), app.mjs $millis ms, $runs runs each"
echo "perf record alone:  ${perf_times[*]} s (median $perf_median)"
echo "v8inline record:    ${record_times[*]} s (median $record_median)"
echo "record's own time:  $(elapsed "$perf_median" "$record_median") s"
ls -l record-out | awk 'NR > 1 && /profile|flamegraph/ { print "  " $5 " bytes  " $9 }'
rm -rf perf-only record-out record.log
