#!/usr/bin/env bash
# Records testdata/deno-builtins/: `v8inline record -- deno run for_in.js`,
# a program whose time goes mostly to V8's builtins, which run from Deno's
# stripped binary (perf can only say `[deno]`; the code log's
# `code-creation,Builtin` records name them, issue 41). Kept: perf.data,
# `perf script` of it, the code log, the jitdump (its code bytes zeroed,
# lib.sh's zero_code_bytes) and the Deno version. The tests that read them
# need the same Deno binary at the same path (the blob is found in it).
#
#   testdata/deno-builtins/record.sh     (DENO: default the npm package's
#                                        /opt/deno/node_modules/@deno/linux-x64-glibc/deno;
#                                        V8INLINE: default target/release/v8inline; MILLIS: 500)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
deno=${DENO:-/opt/deno/node_modules/@deno/linux-x64-glibc/deno}
v8inline=${V8INLINE:-$here/../../target/release/v8inline}
millis=${MILLIS:-500}
work=/tmp/v8inline-deno-builtins
rm -rf "$work"
mkdir -p "$work"
cp "$here/for_in.js" "$work/"
cd "$work"
DENO_NO_UPDATE_CHECK=1 "$v8inline" record --frequency 997 --output-dir out -- \
  "$deno" run -A for_in.js "$millis" >/dev/null
perf script -i out/perf.data >perf.script 2>/dev/null
log=$(cd out && ls *codspeed-v8-*.log)
dump=$(cd out && ls jit-*.dump)
zero_code_bytes "out/$dump"
"$deno" --version >"$here/deno-version.txt"
rm -f "$here"/*.gz
for file in "out/$log" "out/$dump" out/perf.data perf.script; do
  gzip -9 -n -c "$file" >"$here/$(basename "$file").gz"
done
echo "deno-builtins: $(du -sh "$here" | cut -f1) in $here" >&2
