#!/usr/bin/env bash
# Records testdata/compare/: app.js (semver sorting and filtering versions,
# with our small `clampPart` that TurboFan inlines into `versionKey`) under
# `v8inline record`, as unchanged pairs and as a base/head pair where the
# head's clampPart does more work (the `// SLOWDOWN` line replaced), each
# checkout in its own directory as CI has them.
#
#   testdata/compare/record.sh              (PAIRS=10 unchanged pairs)
#
# Each recording directory is laid out as `record` writes one (the
# contract of docs/compare.md) with what compare reads: profile.folded.gz,
# recording.json (project_root: the checkout), and benchmarks.json naming
# one benchmark, "sort and filter versions", whose windows are the whole
# run (directory "."), timed by app.js itself per round (mean, stddev,
# samples in ns, as a harness reports them).
#
# Writes OUT (default: this directory)/recordings/{base,head,
# head-interpreted,unchanged-N-a,unchanged-N-b}/. Needs perf, npm, node 20
# and a built target/release/v8inline. MILLIS (3000) is how long each run
# lasts.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${OUT:-$here}
v8inline=${V8INLINE:-$repo/target/release/v8inline}
node=${NODE:-$(command -v node)}
pairs=${PAIRS:-10}
export MILLIS=${MILLIS:-3000}
work=/tmp/v8inline-compare

"$node" --version | grep -q '^v20\.' || { echo "needs node 20: $node is $("$node" --version)" >&2; exit 1; }

# A checkout: app.js and semver, pinned, in its own directory (a project
# root, as package.json makes it).
checkout() {
  local directory=$1 slow=$2 interpreted=${3:-0}
  rm -rf "$directory"
  mkdir -p "$directory"
  cp "$here/app.js" "$directory/"
  if [ "$slow" = 1 ]; then
    sed -i 's|^  // SLOWDOWN$|  for (let round = 0; round < 24; round++) value = (value * 31 + round) % 100003;\n  value = part < 0 ? 0 : part > 99999 ? 99999 : part;|' "$directory/app.js"
    grep -q 'round < 24' "$directory/app.js"
  fi
  if [ "$interpreted" = 1 ]; then
    sed -i 's|^// NEVER_OPTIMIZE$|%NeverOptimizeFunction(clampPart);|' "$directory/app.js"
    grep -q '^%NeverOptimizeFunction' "$directory/app.js"
  fi
  (cd "$directory" && echo '{"name": "compare-app", "private": true}' >package.json &&
    npm install --silent --no-audit --no-fund semver@7.6.3)
}

# Records the checkout in $1 into $out/recordings/$2: folded stacks and
# recording.json only (what compare reads), gzipped.
record() {
  local directory=$1 name=$2
  shift 2
  local destination=$out/recordings/$name
  rm -rf "$destination" "$work/out"
  (cd "$directory" && TIMINGS="$work/timings.json" "$v8inline" record --output-dir "$work/out" -- "$node" "$@" app.js >/dev/null)
  mkdir -p "$destination"
  gzip -9 -n -c "$work/out/profile.folded" >"$destination/profile.folded.gz"
  python3 - "$destination" "$directory" "$node" "$work/timings.json" "$@" <<'PYTHON'
import json, subprocess, sys
destination, directory, node, timings, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")
recording = {"version": 1, "project_root": directory, "command": ["node", *flags, "app.js"], "runtime": f"node {version}"}
benchmarks = {"version": 1, "benchmarks": [{
    "name": "sort and filter versions", "directory": ".", "harness": "performance.measure",
    "time_per_iteration": json.load(open(timings)),
}]}
for name, value in (("recording.json", recording), ("benchmarks.json", benchmarks)):
    with open(f"{destination}/{name}", "w") as file:
        json.dump(value, file, indent=1)
        file.write("\n")
PYTHON
}

checkout "$work/base" 0
checkout "$work/head" 1
checkout "$work/head-interpreted" 1 1
record "$work/base" base
record "$work/head" head
record "$work/head-interpreted" head-interpreted --allow-natives-syntax
for pair in $(seq 1 "$pairs"); do
  record "$work/base" "unchanged-$pair-a"
  record "$work/base" "unchanged-$pair-b"
done
