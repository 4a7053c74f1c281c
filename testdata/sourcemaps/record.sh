#!/usr/bin/env bash
# Records the source-map test data: one small TypeScript program
# (src/server.ts calls src/http/parse.ts in a hot loop that V8 inlines)
# built two ways and profiled with perf and V8's code log:
#
#   build/tsc/           tsc --sourceMap: one .js and a linked .js.map per module
#   build/bundle.min.js  esbuild --bundle --minify --sourcemap=inline: one
#                        minified script with its map in a data: URL
#
#   testdata/sourcemaps/record.sh
#
# Needs perf (`perf record -e cpu-clock` must work), node 20 and npm (for
# `typescript` and `esbuild`). Programs run from a fixed directory so the
# script paths in the logs are the same on every machine; the tests map
# them back here with --substitute-path.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/v8inline-testdata/sourcemaps
tools=/tmp/v8inline-testdata/sourcemap-tools
millis=${MILLIS:-1500}
frequency=${FREQUENCY:-997}
node=${NODE:-/usr/bin/node}

mkdir -p "$tools"
[ -x "$tools/node_modules/.bin/tsc" ] || npm install --silent --prefix "$tools" typescript@5 esbuild@0.24 >&2

rm -rf "$here/build" "$work"
mkdir -p "$work"
cp -r "$here/src" "$here/tsconfig.json" "$work/"
cd "$work"
"$tools/node_modules/.bin/tsc" -p tsconfig.json
"$tools/node_modules/.bin/esbuild" src/server.ts --bundle --platform=node --minify \
  --sourcemap=inline --sources-content=false --outfile=build/bundle.min.js --log-level=warning

record() {
  local name=$1 script=$2
  local run=$work/record-$name out=$here/$name
  rm -rf "$run" "$out"
  mkdir -p "$run" "$out"
  (
    cd "$run"
    perf record -q -e cpu-clock -F "$frequency" -k mono -g -o perf.data -- \
      "$node" --perf-prof --log-code --log-source-code --interpreted-frames-native-stack \
      --logfile=codspeed-v8-%p.log --no-logfile-per-isolate "$work/$script" "$millis" >/dev/null
    perf script -i perf.data >perf.script 2>/dev/null
    local log dump
    log=$(ls codspeed-v8-*.log)
    dump=$(ls jit-*.dump)
    # The tests need the jitdump and the code log: the perf script names
    # JIT frames by raw address.
    for file in "$log" "$dump" perf.script; do
      gzip -9 -n -c "$file" >"$out/$file.gz"
    done
  )
  echo "$name: $(du -sh "$out" | cut -f1) in $out" >&2
}

record tsc build/tsc/server.js
record minified build/bundle.min.js
cp -r "$work/build" "$here/build"
"$node" --version >"$here/node-version.txt"
