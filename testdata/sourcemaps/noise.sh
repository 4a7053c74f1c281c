#!/usr/bin/env bash
# Measures the run-to-run noise that tests/sourcemaps.rs allows between the
# builds' profiles: records every build RUNS times per node version (record.sh
# with OUT, nothing here is touched), folds each run with v8inline and prints
# the total-variation distances of the self shares per (original file,
# function) of the samples whose innermost frame is a frame of the program
# (as `program_self_shares` in the test): between runs of the same build,
# between the bundles and the tsc build, and the latter without source maps.
#
#   testdata/sourcemaps/noise.sh [RUNS [VERSION...]]    (default: 6, 20 24)
#
# NOISE_DIR (default /tmp/v8inline-testdata/sourcemaps-noise) holds the runs;
# RECORD=0 folds and measures the runs already there. V8INLINE names the
# binary (default target/release/v8inline). Needs what record.sh needs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-6}
shift || true
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(20 24)
noise=${NOISE_DIR:-/tmp/v8inline-testdata/sourcemaps-noise}
v8inline=${V8INLINE:-$here/../../target/release/v8inline}

for run in $(seq 1 "$runs"); do
  [ "${RECORD:-1}" = 0 ] || OUT=$noise/run$run "$here/record.sh" "${versions[@]}"
  for version in "${versions[@]}"; do
    for build in tsc bundle minified; do
      recording=$noise/run$run/node$version/$build
      for maps in with without; do
        flags=()
        [ $maps = with ] || flags=(--no-source-maps)
        "$v8inline" "$recording"/perf.script.gz --log "$recording"/codspeed-v8-*.log.gz \
          --jitdump "$recording"/jit-*.dump.gz "${flags[@]}" >"$recording.$maps.folded"
      done
    done
  done
done

python3 - "$noise" "$runs" "${versions[@]}" <<'PYTHON'
import collections, itertools, re, statistics, sys

noise, runs, versions = sys.argv[1], int(sys.argv[2]), [int(version) for version in sys.argv[3:]]
root = '/tmp/v8inline-testdata/sourcemaps/'
frame = re.compile(r"^JS:(?:o(?=[~^+*]))?[~^+*']*(.*) (\S+):\d+:\d+$")

def shares(path):
    counts = collections.Counter()
    for line in open(path):
        stack, count = line.rstrip('\n').rsplit(' ', 1)
        match = frame.match(stack.rsplit(';', 1)[-1])
        if match and match.group(2).startswith(root):
            counts[(match.group(2), match.group(1))] += int(count)
    total = sum(counts.values())
    return {key: count / total for key, count in counts.items()}

def distance(first, second):
    return sum(abs(first.get(key, 0) - second.get(key, 0)) for key in first.keys() | second.keys()) / 2

def summary(name, values):
    print(f'{name:44} pairs {len(values):3}  min {min(values):.3f}  median {statistics.median(values):.3f}  '
          f'max {max(values):.3f}')

for version in versions:
    profiles = {(run, build, maps): shares(f'{noise}/run{run}/node{version}/{build}.{maps}.folded')
                for run in range(1, runs + 1) for build in ('tsc', 'bundle', 'minified')
                for maps in ('with', 'without')}
    same = []
    for build in ('tsc', 'bundle', 'minified'):
        pairs = [distance(profiles[(first, build, 'with')], profiles[(second, build, 'with')])
                 for first, second in itertools.combinations(range(1, runs + 1), 2)]
        same += pairs
        summary(f'node {version}: {build} vs {build} (two runs)', pairs)
    summary(f'node {version}: any build vs itself (two runs)', same)
    for build in ('bundle', 'minified'):
        for maps in ('with', 'without'):
            summary(f'node {version}: {build} vs tsc, {maps} source maps',
                    [distance(profiles[(first, build, maps)], profiles[(second, 'tsc', maps)])
                     for first in range(1, runs + 1) for second in range(1, runs + 1)])
PYTHON
