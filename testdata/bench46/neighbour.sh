#!/usr/bin/env bash
# A noisy neighbour: CPU hogs in random bursts (0.5 to 4 s of one core spinning,
# now and then two), with random pauses of 0 to 4 s between them, until killed.
# study.sh runs it beside every comparison.
set -u
trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM INT EXIT
while :; do
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", r / 32768 * 4 }')"
  burst=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.5 + r / 32768 * 3.5 }')
  hogs=$(( RANDOM % 4 == 0 ? 2 : 1 ))
  for _ in $(seq "$hogs"); do timeout "$burst" sh -c 'while :; do :; done' & done
  wait
done
