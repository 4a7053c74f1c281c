#!/usr/bin/env bash
# Runs every fuzz target, one after another, each for RUNS executions or
# SECONDS_PER_TARGET seconds, whichever comes first (defaults: 10 million,
# 30 minutes), single-process. Logs go to fuzz/logs/TARGET/fuzz-0.log, with
# libFuzzer's final statistics (stat::number_of_executed_units) at the end.
#
# Usage: fuzz/run-all.sh [TARGET...]     (default: all targets)
set -euo pipefail
cd "$(dirname "$0")"
RUNS=${RUNS:-10000000}
SECONDS_PER_TARGET=${SECONDS_PER_TARGET:-1800}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(code_log jitdump perf_script pipeline perf_data ticks source_map)
fi
[ -d corpus ] || python3 build-seed-corpus.py
cargo +nightly fuzz build -O
binaries="target/x86_64-unknown-linux-gnu/release"
for target in "${targets[@]}"; do
  mkdir -p "logs/$target" "artifacts/$target"
  echo "$(date -u +%H:%M:%S) $target: start"
  # -jobs/-workers=1: one process in the background; -timeout=10 turns a
  # slow input into a reported hang; 2 GB RSS is the out-of-memory limit.
  (cd "logs/$target" && "../../$binaries/$target" "../../corpus/$target" \
    -artifact_prefix="../../artifacts/$target/" -jobs=1 -workers=1 \
    -runs="$RUNS" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1) || echo "$target: libFuzzer exited with $?"
  echo "$(date -u +%H:%M:%S) $target: $(grep -h 'stat::number_of_executed_units' "logs/$target"/fuzz-0.log | tail -1)"
done
