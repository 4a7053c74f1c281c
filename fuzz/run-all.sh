#!/usr/bin/env bash
# The fuzzing campaign of issue 14 in one command: every fuzz target to its
# execution count (10 million, the whole-pipeline target 1 million), two
# targets at a time, then every final corpus replayed once under
# AddressSanitizer. See fuzz/README.md.
#
# Usage: fuzz/run-all.sh [TARGET...]      (default: every target of `cargo fuzz list`)
#
# Environment:
#   RUNS=10000000         executions per target (-runs)
#   PIPELINE_RUNS=1000000 executions of the pipeline target
#   PARALLEL=2            targets fuzzed at once (one process each)
#   MAX_SECONDS=0         stop a target after this many seconds too (0: no limit)
#   ASAN_REPLAY=1         replay each corpus under AddressSanitizer at the end (0: skip)
#   NICE=0                niceness of the fuzzing processes
#
# Writes logs/TARGET.log (libFuzzer's output, its final statistics at the end)
# and one line per target to logs/results.tsv: target, commit of the build,
# executions asked and done, seconds, executions per second, peak RSS (MB),
# libFuzzer's exit status (0: no crash, hang or out-of-memory) and the
# number of files in artifacts/TARGET/ (crash-*, timeout-*, oom-*: inputs to
# replay). Corpora grow in corpus/TARGET/ from run to run.
set -euo pipefail
cd "$(dirname "$0")"
RUNS=${RUNS:-10000000}
PIPELINE_RUNS=${PIPELINE_RUNS:-1000000}
PARALLEL=${PARALLEL:-2}
MAX_SECONDS=${MAX_SECONDS:-0}
ASAN_REPLAY=${ASAN_REPLAY:-1}
NICE=${NICE:-0}

# The longest input libFuzzer makes or keeps, per target: the size of the
# largest seed of build-seed-corpus.py, so that a corpus grown by earlier
# runs does not make every execution slower. Targets not listed get
# libFuzzer's default (the largest corpus input, at least 4096 bytes).
declare -A MAX_LEN=(
  [code_log]=4096
  [jitdump]=4096
  [perf_script]=4096
  [perf_data]=8192
  [ticks]=8192
  [pipeline]=24576
  [source_map]=8192
  [elf_symbols]=36864
  [jitted_elf]=8192
  [compare]=32768
)
# Slowest first, so that the last two run side by side.
ORDER=(ticks source_map code_log perf_data perf_script pipeline elf_symbols jitted_elf jitdump)

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  declare -A listed=() ordered=()
  while read -r target; do listed[$target]=1; done < <(cargo +nightly fuzz list)
  for target in "${ORDER[@]}"; do
    ordered[$target]=1
    if [ -n "${listed[$target]:-}" ]; then targets+=("$target"); fi
  done
  for target in "${!listed[@]}"; do
    if [ -z "${ordered[$target]:-}" ]; then targets+=("$target"); fi
  done
fi

# No sanitizer: see fuzz/README.md (v8inline's own unsafe code is `unsafe impl
# Pod` on byte-array structs, a prefetch, and the file mapping the targets do
# not reach; the replay below runs every
# corpus input under AddressSanitizer once).
cargo +nightly fuzz build -O --sanitizer none
binaries=$PWD/target/x86_64-unknown-linux-gnu/release
# Seeds are named by their hash: building them again adds what is new.
python3 build-seed-corpus.py corpus >/dev/null
mkdir -p logs
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- .. || echo "+dirty")
results=logs/results.tsv
[ -f "$results" ] || printf 'target\tcommit\truns_asked\texecuted\tseconds\texec_per_s\tpeak_rss_mb\texit\tartifacts\n' >"$results"

stat_of() { grep -h "^stat::$1:" "$2" | tail -1 | awk '{print $2}'; }

fuzz_target() {
  local target=$1 runs=$RUNS
  [ "$target" = pipeline ] && runs=$PIPELINE_RUNS
  local log=logs/$target.log max_len=()
  [ -n "${MAX_LEN[$target]:-}" ] && max_len=(-max_len="${MAX_LEN[$target]}")
  mkdir -p "corpus/$target" "artifacts/$target"
  echo "$(date -u +%H:%M:%S) $target: start, $runs executions"
  local start=$EPOCHREALTIME status=0
  # -timeout=10: an input taking 10 s is a hang; -rss_limit_mb=2048: the
  # out-of-memory limit; stdin closed (a fuzzed path may name /dev/stdin).
  nice -n "$NICE" "$binaries/$target" "corpus/$target" -artifact_prefix="artifacts/$target/" \
    -runs="$runs" -max_total_time="$MAX_SECONDS" -timeout=10 -rss_limit_mb=2048 "${max_len[@]}" \
    -print_final_stats=1 </dev/null >"$log" 2>&1 || status=$?
  local seconds executed rate
  seconds=$(awk -v start="$start" -v end="$EPOCHREALTIME" 'BEGIN { printf "%.0f", end - start }')
  executed=$(stat_of number_of_executed_units "$log")
  rate=$(awk -v runs="${executed:-0}" -v start="$start" -v end="$EPOCHREALTIME" 'BEGIN { printf "%.0f", runs / (end - start) }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$commit" "$runs" "${executed:-?}" "$seconds" "$rate" \
    "$(stat_of peak_rss_mb "$log")" "$status" "$(ls "artifacts/$target" | wc -l)" >>"$results"
  echo "$(date -u +%H:%M:%S) $target: ${executed:-?} executions in ${seconds} s, exit $status"
}

for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || true; done
  fuzz_target "$target" &
done
wait

if [ "$ASAN_REPLAY" = 1 ]; then
  # Every input of every final corpus once, under AddressSanitizer (memory
  # errors in the unsafe code of dependencies; the C of zstd is not
  # instrumented): -runs=0 reads the corpus and stops.
  cargo +nightly fuzz build -O --target-dir target/asan
  for target in "${targets[@]}"; do
    log=logs/$target.asan.log status=0
    "target/asan/x86_64-unknown-linux-gnu/release/$target" "corpus/$target" -runs=0 -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="artifacts/$target/asan-" -print_final_stats=1 </dev/null >"$log" 2>&1 || status=$?
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target (asan replay)" "$commit" 0 \
      "$(stat_of number_of_executed_units "$log")" - - "$(stat_of peak_rss_mb "$log")" "$status" \
      "$(ls "artifacts/$target" | wc -l)" >>"$results"
    echo "$target: corpus replayed under AddressSanitizer, exit $status"
  done
fi
column -t -s $'\t' "$results"
