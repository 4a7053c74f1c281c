#!/usr/bin/env bash
# Times v8inline on large inputs built from the real node 20 recording and
# compares it with inferno-collapse-perf on the same perf script.
#
#   bench/large.sh [RUNS]        (default 5 runs of each command)
#   bench/large.sh RUNS ingest   only the code-log ingest runs (`lookup`)
#
# Needs inferno-collapse-perf (`cargo install inferno`, not for `ingest`) and
# GNU time (/usr/bin/time, Debian package `time`). Inputs go to
# $V8INLINE_BENCH_DIR (default /tmp/v8inline-bench) and are reused when present:
#   perf.script              testdata/node20/perf.script repeated to >= 500 MB
#   codspeed-v8-13233.log    the node 20 code log, 740 copies with shifted
#                            addresses (>= 1 GB)
#   nosources/codspeed-v8-13233.log
#                            the same without its script-source records, as
#                            node --no-log-source-code writes it (243 MB)
#   jit-13233.dump           its jitdump, shifted the same way (1.7 GB)
#   tsc/                     the same three for a real TypeScript compiler
#                            run (bench/record-tsc.sh, needs npm): its code
#                            log 100 times (1.04 GB; 281 MB without
#                            sources), its jitdump likewise (1.2 GB). This is
#                            the shape of the logs users have: few builtins,
#                            many JS code objects with their tables, ~350
#                            bytes of log each (the node 20 program's log is
#                            mostly builtins, ~120 bytes each).
# The ingest runs read on one thread (`lookup --threads 1`), as issue 14
# measures them; the TypeScript log with its jitdump also on two (the
# default on 2 cores: the jitdump read beside the log). Commands run
# alternately; each figure is the median over the runs of wall time, CPU
# time (user + system) and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
only=${2:-all}
dir=${V8INLINE_BENCH_DIR:-/tmp/v8inline-bench}
recording=testdata/node20
log_gz=$(echo $recording/codspeed-v8-*.log.gz)
jitdump_gz=$(echo $recording/jit-*.dump.gz)

[ "$only" = ingest ] || command -v inferno-collapse-perf >/dev/null ||
  { echo "needs inferno-collapse-perf: cargo install inferno" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install -y time" >&2; exit 1; }

cargo build --release --quiet --bin v8inline --example scale-inputs
v8inline=$PWD/target/release/v8inline
scale=$PWD/target/release/examples/scale-inputs

mkdir -p "$dir/nosources"
[ "$only" = ingest ] || [ -s "$dir/perf.script" ] ||
  "$scale" perf-script $recording/perf.script.gz "$dir/perf.script" 500000000
[ -s "$dir/codspeed-v8-13233.log" ] || "$scale" code-log "$log_gz" "$dir/codspeed-v8-13233.log" 740
[ -s "$dir/nosources/codspeed-v8-13233.log" ] ||
  "$scale" code-log-without-sources "$log_gz" "$dir/nosources/codspeed-v8-13233.log" 740
[ -s "$dir/jit-13233.dump" ] || "$scale" jitdump "$jitdump_gz" "$dir/jit-13233.dump" 740
if [ ! -s "$dir/tsc/jit.dump" ]; then
  bench/record-tsc.sh "$dir/tsc-recording"
  mkdir -p "$dir/tsc/nosources"
  "$scale" code-log "$dir"/tsc-recording/codspeed-v8-*.log "$dir/tsc/code.log" 100
  "$scale" code-log-without-sources "$dir"/tsc-recording/codspeed-v8-*.log "$dir/tsc/nosources/code.log" 100
  "$scale" jitdump "$dir"/tsc-recording/jit-*.dump "$dir/tsc/jit.dump" 100
fi

# Sanity: without V8 data v8inline must write exactly what inferno writes;
# the shifted copies must join (copy 739 of a TurboFan address expands).
if [ "$only" != ingest ]; then
  (cd "$dir" && "$v8inline" --jitdump-dir /nonexistent perf.script > plain.folded)
  (cd "$dir" && inferno-collapse-perf perf.script > inferno.folded)
  cmp "$dir/plain.folded" "$dir/inferno.folded" || { echo "v8inline without expansion differs from inferno" >&2; exit 1; }
fi
for log in "$dir/codspeed-v8-13233.log" "$dir/nosources/codspeed-v8-13233.log"; do
  "$v8inline" lookup --log "$log" --jitdump "$dir/jit-13233.dump" 0x2e37f3a177ea696 2> /dev/null |
    grep -q 'square .*(inlined)' || { echo "$log and the shifted jitdump do not join" >&2; exit 1; }
done
# (copy 99 of the first TurboFan code object names it as the jitdump does)
turbofan=$(grep -m1 '^code-creation,JS,.*,\*$' "$dir"/tsc-recording/codspeed-v8-*.log | cut -d, -f5)
for log in "$dir/tsc/code.log" "$dir/tsc/nosources/code.log"; do
  "$v8inline" lookup --log "$log" --jitdump "$dir/tsc/jit.dump" "$(printf '0x%x' $((turbofan + (99 << 48) + 1)))" 2> /dev/null |
    grep -q ': JS:\*' || { echo "$log and the shifted tsc jitdump do not join" >&2; exit 1; }
done

# measure NAME COMMAND...: one run, appending "wall cpu rss_kb" to $dir/NAME.times.
# (The ingest runs warn that the log's clock restarts: each copy does.)
measure() {
  local name=$1
  shift
  /usr/bin/time -o "$dir/time.out" -f '%e %U %S %M' "$@" > /dev/null 2> "$dir/stderr.out"
  awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }' "$dir/time.out" >> "$dir/$name.times"
}

# median FILE COLUMN
median() {
  cut -d' ' -f"$2" "$1" | sort -g | awk '{ value[NR] = $1 } END { print value[int((NR + 1) / 2)] }'
}

report() {
  local name=$1 bytes=$2
  local wall cpu rss
  wall=$(median "$dir/$name.times" 1)
  cpu=$(median "$dir/$name.times" 2)
  rss=$(median "$dir/$name.times" 3)
  awk -v name="$name" -v wall="$wall" -v cpu="$cpu" -v rss="$rss" -v bytes="$bytes" 'BEGIN {
    printf "%-34s wall %6.2f s (%5.0f MB/s)  cpu %6.2f s (%5.0f MB/s)  peak RSS %7.1f MiB (%.2f of the log)\n",
      name, wall, bytes / 1e6 / wall, cpu, bytes / 1e6 / cpu, rss / 1024, rss * 1024 / bytes }'
}

script_bytes=$([ "$only" = ingest ] && echo 0 || stat -c %s "$dir/perf.script")
log_bytes=$(stat -c %s "$dir/codspeed-v8-13233.log")
nosources_bytes=$(stat -c %s "$dir/nosources/codspeed-v8-13233.log")
tsc_log_bytes=$(stat -c %s "$dir/tsc/code.log")
tsc_nosources_bytes=$(stat -c %s "$dir/tsc/nosources/code.log")
rm -f "$dir"/*.times
for run in $(seq "$runs"); do
  echo "run $run of $runs" >&2
  if [ "$only" != ingest ]; then
    measure v8inline-expand "$v8inline" --log "$log_gz" --jitdump "$jitdump_gz" "$dir/perf.script"
    measure inferno-collapse-perf inferno-collapse-perf "$dir/perf.script"
  fi
  for variant in "" nosources; do
    log="$dir/${variant:+$variant/}codspeed-v8-13233.log"
    measure "log-ingest${variant:+-$variant}" "$v8inline" lookup --threads 1 --log "$log" 0x1
    measure "log+jitdump-ingest${variant:+-$variant}" "$v8inline" lookup --threads 1 --log "$log" --jitdump "$dir/jit-13233.dump" 0x1
    log="$dir/tsc/${variant:+$variant/}code.log"
    measure "tsc-log-ingest${variant:+-$variant}" "$v8inline" lookup --threads 1 --log "$log" 0x1
    measure "tsc-log+jitdump-ingest${variant:+-$variant}" "$v8inline" lookup --threads 1 --log "$log" --jitdump "$dir/tsc/jit.dump" 0x1
    # As users run it: the jitdump read on a second thread beside the log.
    measure "tsc-log+jitdump-ingest-2-threads${variant:+-$variant}" "$v8inline" lookup --threads 2 --log "$log" --jitdump "$dir/tsc/jit.dump" 0x1
  done
done

[ "$only" = ingest ] || echo -n "perf script: $((script_bytes / 1000000)) MB; "
echo "code log: $((log_bytes / 1000000)) MB," \
  "without sources $((nosources_bytes / 1000000)) MB; medians of $runs runs on $(nproc) cores;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$only" != ingest ]; then
  report v8inline-expand "$script_bytes"
  report inferno-collapse-perf "$script_bytes"
fi
report log-ingest "$log_bytes"
report log+jitdump-ingest "$log_bytes"
report log-ingest-nosources "$nosources_bytes"
report log+jitdump-ingest-nosources "$nosources_bytes"
echo "tsc code log: $((tsc_log_bytes / 1000000)) MB, without sources $((tsc_nosources_bytes / 1000000)) MB"
report tsc-log-ingest "$tsc_log_bytes"
report tsc-log+jitdump-ingest "$tsc_log_bytes"
report tsc-log-ingest-nosources "$tsc_nosources_bytes"
report tsc-log+jitdump-ingest-nosources "$tsc_nosources_bytes"
report tsc-log+jitdump-ingest-2-threads "$tsc_log_bytes"
report tsc-log+jitdump-ingest-2-threads-nosources "$tsc_nosources_bytes"
