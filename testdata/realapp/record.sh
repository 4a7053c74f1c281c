#!/usr/bin/env bash
# Records testdata/realapp/: a real app on npm packages (app.js: acorn parses
# package sources, acorn-walk visits them, marked renders README files) under
# perf, the way users record their apps, with node 20.
#
#   testdata/realapp/record.sh
#
# Needs perf (`perf record -e cpu-clock` must work), npm and node 20
# (/usr/bin/node or $NODE). The packages are pinned and installed with npm
# into a fixed directory, $work below, so that the script paths recorded in
# the logs are the same on every machine.
#
# MILLIS (default 4000) sets how long app.js runs, FREQUENCY (997) perf's rate,
# OUT (default: this directory) where the .gz files go (bench/pipeline.sh
# records a sparse copy elsewhere).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here}
work=/tmp/v8inline-realapp
node=${NODE:-/usr/bin/node}
millis=${MILLIS:-4000}
frequency=${FREQUENCY:-997}
packages=(acorn@8.19.0 acorn-walk@8.3.5 marked@18.2.1)

"$node" --version | grep -q '^v20\.' || { echo "needs node 20: $node is $("$node" --version)" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
cp "$here/app.js" "$work/"
cd "$work"
echo '{ "private": true }' >package.json
npm install --silent --no-audit --no-fund --save-exact "${packages[@]}" >&2

# perf samples + jitdump + code log of one process, as testdata/record.sh does.
perf record -q -e cpu-clock -F "$frequency" -k mono -g -o perf.data -- \
  "$node" --perf-prof --log-code --interpreted-frames-native-stack \
  --logfile=codspeed-v8-%p.log --no-logfile-per-isolate \
  app.js "$millis" >&2
perf script -i perf.data >perf.script 2>/dev/null

log=$(ls codspeed-v8-*.log)
dump=$(ls jit-*.dump)
mkdir -p "$out"
rm -f "$out"/*.gz
"$node" --version >"$out/node-version.txt"
for file in "$log" "$dump" perf.data perf.script; do
  gzip -9 -n -c "$file" >"$out/$file.gz"
done
ls -l "$out"/*.gz >&2
echo "realapp: $(grep -c '^\S' perf.script) samples in $out" >&2
