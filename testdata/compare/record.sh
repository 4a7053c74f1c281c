#!/usr/bin/env bash
# Records testdata/compare/: app.js (semver sorting and filtering versions,
# with our small `clampPart` that TurboFan inlines into `versionKey`) under
# `v8inline record`, as unchanged pairs and as a base/head pair where the
# head's clampPart does more work (the `// SLOWDOWN` line replaced), each
# checkout in its own directory as CI has them.
#
#   testdata/compare/record.sh              (PAIRS=10 unchanged pairs)
#
# Writes OUT (default: this directory)/recordings/{base,head,unchanged-N-a,
# unchanged-N-b}/profile.folded.gz and recording.json. Needs perf, npm, node
# 20 and a built target/release/v8inline. MILLIS (3000) is how long each run
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
  local directory=$1 slow=$2
  rm -rf "$directory"
  mkdir -p "$directory"
  cp "$here/app.js" "$directory/"
  if [ "$slow" = 1 ]; then
    sed -i 's|^  // SLOWDOWN$|  for (let round = 0; round < 24; round++) value = (value * 31 + round) % 100003;\n  value = part < 0 ? 0 : part > 99999 ? 99999 : part;|' "$directory/app.js"
    grep -q 'round < 24' "$directory/app.js"
  fi
  (cd "$directory" && echo '{"name": "compare-app", "private": true}' >package.json &&
    npm install --silent --no-audit --no-fund semver@7.6.3)
}

# Records the checkout in $1 into $out/recordings/$2: folded stacks and
# recording.json only (what compare reads), gzipped.
record() {
  local directory=$1 name=$2
  local destination=$out/recordings/$name
  rm -rf "$destination" "$work/out"
  (cd "$directory" && "$v8inline" record --output-dir "$work/out" -- "$node" app.js >/dev/null)
  mkdir -p "$destination"
  gzip -9 -n -c "$work/out/profile.folded" >"$destination/profile.folded.gz"
  if [ -f "$work/out/recording.json" ]; then cp "$work/out/recording.json" "$destination/"; fi
}

checkout "$work/base" 0
checkout "$work/head" 1
record "$work/base" base
record "$work/head" head
for pair in $(seq 1 "$pairs"); do
  record "$work/base" "unchanged-$pair-a"
  record "$work/base" "unchanged-$pair-b"
done
