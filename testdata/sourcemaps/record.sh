#!/usr/bin/env bash
# Records the source-map test data: one small TypeScript program
# (src/server.ts calls src/http/parse.ts in a hot loop that V8 inlines)
# built three ways from the same sources, each profiled with perf and V8's
# code log on every node version given:
#
#   build/tsc/           tsc --sourceMap: one .js and a linked .js.map per module
#                        (no sourcesContent)
#   build/bundle.js      esbuild --bundle --sourcemap=linked: one script, not
#                        minified, and its map in build/bundle.js.map (with
#                        sourcesContent, esbuild's default)
#   build/bundle.min.js  esbuild --bundle --minify --sourcemap=inline: one
#                        minified script with its map in a data: URL (no
#                        sourcesContent)
#
#   testdata/sourcemaps/record.sh [VERSION...]       (default: 20 24)
#
# writes build/ and, per VERSION, node<VERSION>/{tsc,bundle,minified}/ with
# the code log, jitdump and perf script of one run of each build, and
# node<VERSION>/node-version.txt. With OUT=DIR the runs go to
# DIR/node<VERSION>/ instead and build/ is left alone: repeated recordings,
# e.g. to measure the run-to-run noise of the shares.
#
# To keep the folder small, runs last MILLIS ms (default 1500) and the code
# bytes of every jitdump CODE_LOAD are zeroed (see ../lib.sh). The logs keep
# the scripts' sources (--log-source-code, node's default under
# `v8inline record`): the minified bundle's map is in its text.
#
# Needs perf (`perf record -e cpu-clock` must work), npm (for `typescript`,
# `esbuild` and node versions other than the installed one, see node_binary
# in ../lib.sh) and python3. Programs run from a fixed directory so the
# script paths in the logs are the same on every machine; the tests map them
# back here with --substitute-path.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/v8inline-testdata/sourcemaps
tools=/tmp/v8inline-testdata/sourcemap-tools
millis=${MILLIS:-1500}
frequency=${FREQUENCY:-997}
out_root=${OUT:-$here}

# node_binary, zero_code_bytes: see lib.sh.
. "$here/../lib.sh"

mkdir -p "$tools"
[ -x "$tools/node_modules/.bin/tsc" ] || npm install --silent --prefix "$tools" typescript@5 esbuild@0.24 >&2

rm -rf "$work"
mkdir -p "$work"
cp -r "$here/src" "$here/tsconfig.json" "$work/"
cd "$work"
"$tools/node_modules/.bin/tsc" -p tsconfig.json
"$tools/node_modules/.bin/esbuild" src/server.ts --bundle --platform=node \
  --sourcemap=linked --outfile=build/bundle.js --log-level=warning
"$tools/node_modules/.bin/esbuild" src/server.ts --bundle --platform=node --minify \
  --sourcemap=inline --sources-content=false --outfile=build/bundle.min.js --log-level=warning

# record NODE OUT NAME SCRIPT: one perf-recorded run of SCRIPT into OUT/NAME.
record() {
  local node=$1 out=$2/$3 script=$4
  local run=$work/record-$3
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
    zero_code_bytes "$dump"
    # The tests need the jitdump and the code log: the perf script names
    # JIT frames by raw address.
    for file in "$log" "$dump" perf.script; do
      gzip -9 -n -c "$file" >"$out/$file.gz"
    done
  )
  echo "$3: $(du -sh "$out" | cut -f1) in $out" >&2
}

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(20 24)
for version in "${versions[@]}"; do
  node=$(node_binary "$version")
  out=$out_root/node$version
  rm -rf "$out"
  mkdir -p "$out"
  "$node" --version >"$out/node-version.txt"
  record "$node" "$out" tsc build/tsc/server.js
  record "$node" "$out" bundle build/bundle.js
  record "$node" "$out" minified build/bundle.min.js
done
if [ -z "${OUT:-}" ]; then
  rm -rf "$here/build"
  cp -r "$work/build" "$here/build"
fi
du -sh "$out_root" >&2
