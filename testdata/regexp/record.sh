#!/usr/bin/env bash
# Records testdata/regexp/: node 20 running lone-surrogates.js, whose regular
# expression's source holds `(` (`...(?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)...`),
# under perf, as testdata/record.sh records: perf.data, `perf script` of it,
# the code log and the jitdump (its code bytes zeroed, lib.sh's
# zero_code_bytes). V8 names the regexp's native code `RegExp:<source>`: the
# whole source must reach every output (issue 41).
#
#   testdata/regexp/record.sh        (NODE: default the node 20 on PATH; MILLIS: 1000)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
node=${NODE:-node}
millis=${MILLIS:-1000}
work=/tmp/v8inline-regexp
rm -rf "$work"
mkdir -p "$work"
cp "$here/lone-surrogates.js" "$work/"
cd "$work"
perf record -q -e cpu-clock -F 997 -k mono -g -o perf.data -- \
  "$node" --perf-prof --log-code --interpreted-frames-native-stack \
  --logfile=codspeed-v8-%p.log --no-logfile-per-isolate \
  lone-surrogates.js "$millis" >/dev/null
perf script -i perf.data >perf.script 2>/dev/null
log=$(ls codspeed-v8-*.log)
dump=$(ls jit-*.dump)
zero_code_bytes "$dump"
"$node" --version >"$here/node-version.txt"
rm -f "$here"/*.gz
for file in "$log" "$dump" perf.data perf.script; do
  gzip -9 -n -c "$file" >"$here/$file.gz"
done
echo "regexp: $(du -sh "$here" | cut -f1) in $here" >&2
