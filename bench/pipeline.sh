#!/usr/bin/env bash
# Times the whole pipeline on the real npm-package recording (testdata/realapp)
# and prints a markdown table of medians.
#
#   bench/pipeline.sh [RUNS]        (default 5 runs of each command)
#
# a. `v8inline --perf-data perf.data -o /dev/null` (the code log and jitdump
#    beside it, found by v8inline): samples per second end to end. To separate
#    the one-time costs (reading the code log, the jitdump, node's ELF symbols,
#    the kernel's), the same app is recorded once more at a low rate
#    (testdata/realapp/record.sh with FREQUENCY=$SPARSE_FREQUENCY, default 19 Hz):
#    the same binaries, a code log and jitdump of about the same size, few
#    samples. (full - sparse) samples / (full - sparse) seconds is the rate
#    past the fixed costs. Needs perf and npm for that recording; without
#    perf, only end-to-end figures. The perf.data is named from this
#    machine's binaries: elsewhere (another node build, another kernel) they
#    are not symbolized and (a) does less work.
# b. perf script -> folded with expansion: the realapp perf script repeated to
#    about $BIG_BYTES (default 80 MB), `v8inline --log --jitdump BIG.script -o OUT`
#    against `inferno-collapse-perf BIG.script > OUT2`.
# c. `perf script -i perf.data > /dev/null` on the same perf.data as (a), and
#    the piped path `perf script -i perf.data | v8inline --log --jitdump -`.
# d. A longer recording of the same app ($LONG_MILLIS ms, default 20000, kept
#    in $dir/realapp-long; needs perf): many distinct deep stacks, no
#    repetition. Its perf script folded by v8inline (default threads and one
#    thread) and by inferno: wall, CPU, peak RSS against the folded output's
#    size. Then `cargo bench --bench pipeline` on it: samples per second of
#    --perf-data past the one-time symbol load, on one thread and on two as
#    the binary runs it (criterion, benches/pipeline.rs).
#
# Sample counts come from `v8inline --stats`. Needs inferno-collapse-perf
# (`cargo install inferno`) and GNU time (/usr/bin/time, Debian package
# `time`), installed when missing. Inputs go to $V8INLINE_BENCH_DIR (default
# /tmp/v8inline-bench): the recording is decompressed anew on every run, the
# sparse recording is kept for later runs. Commands run alternately; each
# figure is the median over the runs of wall time, CPU time (user + system)
# and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
dir=${V8INLINE_BENCH_DIR:-/tmp/v8inline-bench}
big_bytes=${BIG_BYTES:-80000000}
sparse_frequency=${SPARSE_FREQUENCY:-19}
recording=testdata/realapp

if ! command -v inferno-collapse-perf >/dev/null; then
  echo "installing inferno (cargo install inferno)" >&2
  cargo install --quiet inferno
fi
if [ ! -x /usr/bin/time ]; then
  echo "installing GNU time (apt-get install -y time)" >&2
  apt-get install -y -qq time >/dev/null
fi

cargo build --release --quiet --bin v8inline
v8inline=$PWD/target/release/v8inline

# The recording, decompressed: perf.data with its code log and jitdump beside
# it; the large perf script: the realapp one repeated to $big_bytes.
real=$dir/realapp
rm -rf "$real"
mkdir -p "$real"
for gz in "$recording"/*.gz; do gzip -dc "$gz" >"$real/$(basename "$gz" .gz)"; done
log=$(echo "$real"/codspeed-v8-*.log)
jitdump=$(echo "$real"/jit-*.dump)
big=$dir/realapp-big.script
: >"$big"
while [ "$(stat -c %s "$big")" -lt "$big_bytes" ]; do cat "$real/perf.script" >>"$big"; done

# The sparse recording of the same app, kept for later runs (needs perf).
has_perf=
perf record -q -e cpu-clock -o "$dir/probe.data" -- true 2>/dev/null && has_perf=1
rm -f "$dir/probe.data"
sparse=$dir/realapp-sparse
if [ ! -s "$sparse/perf.data" ] && [ -n "$has_perf" ]; then
  echo "recording the sparse copy at $sparse_frequency Hz" >&2
  if OUT=$sparse.gz FREQUENCY=$sparse_frequency testdata/realapp/record.sh 2>"$dir/sparse.err"; then
    mkdir -p "$sparse"
    for gz in "$sparse".gz/*.gz; do gzip -dc "$gz" >"$sparse/$(basename "$gz" .gz)"; done
  else
    echo "the sparse recording failed (see $dir/sparse.err): end-to-end figures only" >&2
  fi
  rm -rf "$sparse.gz"
fi
[ -s "$sparse/perf.data" ] || sparse=
[ -n "$has_perf" ] || echo "perf cannot record here: no perf script rows" >&2

# samples PERF_DATA: the samples v8inline folds from it (--stats).
samples() {
  "$v8inline" --perf-data "$1" --stats -o /dev/null 2>&1 | sed -n 's/^v8inline: samples: \([0-9]*\) read.*/\1/p'
}
full_samples=$(samples "$real/perf.data")
big_samples=$("$v8inline" --log "$log" --jitdump "$jitdump" "$big" --stats -o /dev/null 2>&1 |
  sed -n 's/^v8inline: samples: \([0-9]*\) read.*/\1/p')
expanded=$("$v8inline" --perf-data "$real/perf.data" --stats -o /dev/null 2>&1 |
  sed -n 's/^v8inline:   expanded into inlined functions: //p')
[ "${expanded:-0}" -gt 0 ] || { echo "v8inline --perf-data expanded no JIT frame: log and jitdump not found?" >&2; exit 1; }
[ -z "$sparse" ] || sparse_samples=$(samples "$sparse/perf.data")

# measure NAME OUTPUT COMMAND...: one run, appending "wall cpu rss_kb" to $dir/NAME.times.
# Wall time from the clock in ms (GNU time's %e has 10 ms steps, a twentieth
# of these runs); CPU time and peak RSS from GNU time.
measure() {
  local name=$1 output=$2 start end previous=
  shift 2
  # Each run writes a new file: freeing the last run's output is the file
  # system's work, not the tool's (overwriting the 75 MB folded output of
  # (d) took 60 ms on a discard-mounted ext4, writing it anew 20 ms).
  for argument in "$output" "$@"; do
    if [ "$previous" = -o ] || [ "$argument" = "$output" ]; then
      [ ! -f "$argument" ] || rm -f "$argument"
    fi
    previous=$argument
  done
  start=$(date +%s%N)
  /usr/bin/time -o "$dir/time.out" -f '%U %S %M' "$@" >"$output"
  end=$(date +%s%N)
  awk -v wall=$(((end - start) / 1000000)) '{ printf "%.3f %.3f %d\n", wall / 1000, $1 + $2, $3 }' "$dir/time.out" >>"$dir/$name.times"
}

# median NAME COLUMN
median() {
  cut -d' ' -f"$2" "$dir/$1.times" | sort -g | awk '{ value[NR] = $1 } END { print value[int((NR + 1) / 2)] }'
}

rm -f "$dir"/*.times
for run in $(seq "$runs"); do
  echo "run $run of $runs" >&2
  measure perf-data /dev/null "$v8inline" --perf-data "$real/perf.data" -o /dev/null
  [ -z "$sparse" ] || measure perf-data-sparse /dev/null "$v8inline" --perf-data "$sparse/perf.data" -o /dev/null
  if [ -n "$has_perf" ]; then
    measure perf-script /dev/null perf script -i "$real/perf.data"
    measure perf-script-pipe /dev/null bash -c \
      'perf script -i "$1" 2>/dev/null | "$2" --log "$3" --jitdump "$4" -o /dev/null' _ "$real/perf.data" "$v8inline" "$log" "$jitdump"
  fi
  measure big-v8inline /dev/null "$v8inline" --log "$log" --jitdump "$jitdump" "$big" -o "$dir/big.folded"
  measure big-inferno "$dir/big-inferno.folded" inferno-collapse-perf "$big"
done

row() { # NAME COMMAND-TEXT THROUGHPUT-TEXT ('|' in the command is escaped for the table)
  printf '| `%s` | %.3f s | %.2f s | %.0f MB | %s |\n' "${2//|/\\|}" "$(median "$1" 1)" "$(median "$1" 2)" \
    "$(awk -v kb="$(median "$1" 3)" 'BEGIN { print kb / 1024 }')" "$3"
}
per_second() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }

mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.2f MB", b / 1e6 }'; }
kernel_frames() { grep -c 'kernel.kallsyms' "$1" || true; }
big_mb=$(awk -v b="$(stat -c %s "$big")" 'BEGIN { printf "%.0f", b / 1e6 }')
folded_bytes=$(stat -c %s "$dir/big.folded")
echo
echo "medians of $runs runs on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "- realapp: $full_samples samples, perf.data $(mb "$real/perf.data"), code log $(mb "$log"), jitdump $(mb "$jitdump"), perf script $(mb "$real/perf.script") ($(kernel_frames "$real/perf.script") kernel frames)"
[ -z "$sparse" ] || echo "- sparse copy ($sparse_frequency Hz): $sparse_samples samples, perf.data $(mb "$sparse/perf.data"), code log $(mb "$(echo "$sparse"/codspeed-v8-*.log)"), jitdump $(mb "$(echo "$sparse"/jit-*.dump)") ($(kernel_frames "$sparse/perf.script") kernel frames)"
echo "- big perf script: realapp's repeated, $big_mb MB, $big_samples samples"
echo
echo '| command | wall | CPU (user + sys) | peak RSS | rate |'
echo '|---|---|---|---|---|'
row perf-data "v8inline --perf-data perf.data -o /dev/null" \
  "$(per_second "$full_samples" "$(median perf-data 1)") samples/s end to end ($full_samples samples)"
if [ -n "$sparse" ]; then
  row perf-data-sparse "v8inline --perf-data sparse/perf.data -o /dev/null" \
    "$sparse_samples samples: mostly the fixed costs"
  # CPU time: one thread, less disturbed than wall time by other load.
  net=$(awk -v n="$full_samples" -v m="$sparse_samples" -v t="$(median perf-data 2)" -v s="$(median perf-data-sparse 2)" \
    'BEGIN { if (t > s) printf "%.0f samples/s", (n - m) / (t - s); else print "n/a" }')
  echo "| (difference of the two, CPU time) | | | | $net past the fixed costs |"
fi
if [ -n "$has_perf" ]; then
  row perf-script "perf script -i perf.data > /dev/null" \
    "$(per_second "$full_samples" "$(median perf-script 1)") samples/s"
  row perf-script-pipe "perf script -i perf.data | v8inline --log LOG --jitdump DUMP -o /dev/null" \
    "$(per_second "$full_samples" "$(median perf-script-pipe 1)") samples/s"
fi
row big-v8inline "v8inline --log LOG --jitdump DUMP big.script -o big.folded" \
  "$(awk -v b="$big_mb" -v t="$(median big-v8inline 1)" 'BEGIN { printf "%.0f MB/s", b / t }'), $(per_second "$big_samples" "$(median big-v8inline 1)") samples/s"
row big-inferno "inferno-collapse-perf big.script > big-inferno.folded" \
  "$(awk -v b="$big_mb" -v t="$(median big-inferno 1)" 'BEGIN { printf "%.0f MB/s", b / t }'), $(per_second "$big_samples" "$(median big-inferno 1)") samples/s"
echo
awk -v vw="$(median big-v8inline 1)" -v iw="$(median big-inferno 1)" -v vc="$(median big-v8inline 2)" \
  -v ic="$(median big-inferno 2)" -v rss="$(median big-v8inline 3)" -v out="$folded_bytes" 'BEGIN {
  printf "big perf script, v8inline / inferno: wall %.2f, CPU %.2f; v8inline peak RSS %.1f MB for %.2f MB of folded output (RSS / output %.1f)\n",
    vw / iw, vc / ic, rss / 1024, out / 1e6, rss * 1024 / out }'

# d. The long recording.
long=$dir/realapp-long
if [ ! -s "$long/perf.data" ] && [ -n "$has_perf" ]; then
  echo "recording the long copy (${LONG_MILLIS:-20000} ms)" >&2
  if OUT=$long.gz MILLIS=${LONG_MILLIS:-20000} testdata/realapp/record.sh 2>"$dir/long.err"; then
    # A new recording replaces the whole directory: files of an older one
    # (another pid) would be paired with it.
    rm -rf "$long"
    mkdir -p "$long"
    for gz in "$long".gz/*.gz; do gzip -dc "$gz" >"$long/$(basename "$gz" .gz)"; done
    cp "$long".gz/*.gz "$long/"  # criterion reads the .gz files
  fi
  rm -rf "$long.gz"
fi
if [ -s "$long/perf.data" ]; then
  long_log=$(echo "$long"/codspeed-v8-*.log)
  long_jitdump=$(echo "$long"/jit-*.dump)
  rm -f "$dir"/long-*.times
  for run in $(seq "$runs"); do
    measure long-v8inline /dev/null "$v8inline" --log "$long_log" --jitdump "$long_jitdump" "$long/perf.script" -o "$dir/long.folded"
    measure long-v8inline-1 /dev/null "$v8inline" --threads 1 --log "$long_log" --jitdump "$long_jitdump" "$long/perf.script" -o "$dir/long.folded"
    measure long-inferno "$dir/long-inferno.folded" inferno-collapse-perf "$long/perf.script"
  done
  long_samples=$("$v8inline" --perf-data "$long/perf.data" --stats -o /dev/null 2>&1 | sed -n 's/^v8inline: samples: \([0-9]*\) read.*/\1/p')
  echo
  echo "- long recording: $long_samples samples, $(wc -l <"$dir/long.folded") distinct stacks, perf script $(mb "$long/perf.script"), folded output $(mb "$dir/long.folded")"
  echo
  echo '| command | wall | CPU (user + sys) | peak RSS | RSS / folded output |'
  echo '|---|---|---|---|---|'
  folded_long=$(stat -c %s "$dir/long.folded")
  for name in long-v8inline long-v8inline-1 long-inferno; do
    case $name in
      long-v8inline) text="v8inline --log LOG --jitdump DUMP perf.script -o out.folded" ;;
      long-v8inline-1) text="v8inline --threads 1 --log LOG --jitdump DUMP perf.script -o out.folded" ;;
      long-inferno) text="inferno-collapse-perf perf.script > out.folded" ;;
    esac
    row "$name" "$text" "$(awk -v kb="$(median "$name" 3)" -v out="$folded_long" 'BEGIN { printf "%.2f", kb * 1024 / out }')"
  done
  awk -v vw="$(median long-v8inline 1)" -v iw="$(median long-inferno 1)" -v vc="$(median long-v8inline 2)" \
    -v ic="$(median long-inferno 2)" 'BEGIN { printf "long perf script, v8inline / inferno: wall %.2f, CPU %.2f\n", vw / iw, vc / ic }'
  echo
  echo "criterion (benches/pipeline.rs) on the long recording:"
  V8INLINE_BENCH_RECORDING=$long cargo bench --quiet --bench pipeline 2>/dev/null | grep -E '^realapp/|time:|thrpt:' || true
fi
