#!/bin/sh
# Copies the collapse-perf suite of inferno 0.12.8 (the inferno v8inline is
# pinned to) into this directory, gzipped: the perf script inputs and the
# folded results inferno's tests/collapse-perf.rs asserts, from inferno's own
# tests/data/collapse-perf and from its `flamegraph` submodule (Brendan
# Gregg's FlameGraph at the commit inferno 0.12.8 pins). Both are CDDL-1.0;
# see README.md here. tests/collapse_passthrough.rs runs the v8inline binary
# on every case with the case's flags.
#
#   testdata/inferno-suite/copy.sh INFERNO_GIT_DIR FLAMEGRAPH_GIT_DIR
#
# e.g. after `git clone https://github.com/jonhoo/inferno` and
# `git clone https://github.com/brendangregg/FlameGraph`.
set -eu
inferno=$1
flamegraph=$2
here=$(cd "$(dirname "$0")" && pwd)
inferno_commit=v0.12.8
# The submodule's commit, as inferno 0.12.8 records it.
flamegraph_commit=$(git -C "$inferno" ls-tree "$inferno_commit" flamegraph | awk '{print $3}')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/inferno" "$work/flamegraph"
git -C "$inferno" archive "$inferno_commit" tests/data/collapse-perf | tar -x -C "$work/inferno"
git -C "$flamegraph" archive "$flamegraph_commit" test example-perf-stacks.txt.gz | tar -x -C "$work/flamegraph"
rm -rf "$here/flamegraph" "$here/inferno"
mkdir -p "$here/flamegraph/results" "$here/inferno/results"
for file in "$work"/flamegraph/test/perf-*.txt; do
  gzip -9n < "$file" > "$here/flamegraph/$(basename "$file").gz"
done
for file in "$work"/flamegraph/test/results/perf-*-collapsed-*.txt; do
  gzip -9n < "$file" > "$here/flamegraph/results/$(basename "$file").gz"
done
cp "$work/flamegraph/example-perf-stacks.txt.gz" "$here/flamegraph/"
for file in "$work"/inferno/tests/data/collapse-perf/*.txt; do
  gzip -9n < "$file" > "$here/inferno/$(basename "$file").gz"
done
for file in "$work"/inferno/tests/data/collapse-perf/results/*.txt; do
  gzip -9n < "$file" > "$here/inferno/results/$(basename "$file").gz"
done
echo "inferno $inferno_commit ($(git -C "$inferno" rev-parse "$inferno_commit^{commit}")), FlameGraph $flamegraph_commit" > "$here/source.txt"
