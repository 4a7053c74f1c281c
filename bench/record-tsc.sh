#!/usr/bin/env bash
# Records the code log and jitdump of a real TypeScript compiler run, the
# input shape of issue 14's ingest figures: node 20 runs tsc 5.6.3 to
# type-check TypeScript's own API declarations (typescript.d.ts, 0.5 MB),
# about 3 s. Its code log is 10 MB with script sources (7.6 MB of them) and
# 2.8 MB without: 8,000 code objects, 5,700 of them JS with their position
# and inlining tables, about 350 bytes of log each.
#
#   bench/record-tsc.sh OUT_DIR
#
# Needs npm and node 20 (/usr/bin/node or $NODE). Writes
# OUT_DIR/codspeed-v8-PID.log and OUT_DIR/jit-PID.dump (bench/large.sh scales
# them up). No perf: only the code log and jitdump are needed.
set -euo pipefail
out=${1:?usage: bench/record-tsc.sh OUT_DIR}
node=${NODE:-/usr/bin/node}
work=/tmp/v8inline-tsc

"$node" --version | grep -q '^v20\.' || { echo "needs node 20: $node is $("$node" --version)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work" "$out"
cd "$work"
echo '{ "private": true }' >package.json
npm install --silent --no-audit --no-fund --save-exact typescript@5.6.3 >&2
cat >tsconfig.json <<'JSON'
{ "compilerOptions": { "noEmit": true, "target": "es2020", "strict": true, "types": [] },
  "files": ["node_modules/typescript/lib/typescript.d.ts"] }
JSON
"$node" --perf-prof --log-code --logfile=codspeed-v8-%p.log --no-logfile-per-isolate \
  node_modules/typescript/lib/tsc.js -p .
rm -f "$out"/codspeed-v8-*.log "$out"/jit-*.dump
mv codspeed-v8-*.log jit-*.dump "$out/"
ls -l "$out" >&2
