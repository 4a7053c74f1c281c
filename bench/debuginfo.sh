#!/usr/bin/env bash
# Times `v8inline debuginfo` on the esmapp node 26 recording (testdata/esmapp/
# node26: 6,697 code loads) after `perf inject -j`, and reports the bytes it
# adds per code object.
#
#   bench/debuginfo.sh [RUNS]        (default 5)
#
# perf inject writes the jitted files next to the jitdump that perf.data
# names, /tmp/v8inline-esmapp/jit-17052.dump (record.sh's directory); this
# script uses its own directory of the same length, $dir below, and a copy of
# perf.data naming it there (tests/debuginfo.rs does the same), with perf's
# build-id cache in $dir/buildid (not ~/.debug). Each run starts from perf
# inject's files (copied back, not timed) and times, with GNU time:
#   a. debuginfo on the default threads (one per core), every file rewritten;
#   b. the same with --threads 1;
#   c. debuginfo again on its own output (every file already has its DWARF).
# Medians of wall and CPU (user + system) time, peak RSS. Then the sizes: the
# bytes added per rewritten file (file sizes after minus before) and the size
# of the debug sections before (perf inject's .debug_line, .debug_info,
# .debug_abbrev) and after. Needs perf, python3, GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
recording=testdata/esmapp/node26
recorded_at=/tmp/v8inline-esmapp
dir=/tmp/v8i-dbg-bench00
[ ${#dir} -eq ${#recorded_at} ] || { echo "$dir must be as long as $recorded_at" >&2; exit 1; }
command -v perf >/dev/null || { echo "needs perf" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 1; }

cargo build --release --quiet --bin v8inline
v8inline=$PWD/target/release/v8inline
log=$(ls "$recording"/codspeed-v8-*.log.gz)
jitdump_gz=$(ls "$recording"/jit-*.dump.gz)
jitdump=$dir/$(basename "$jitdump_gz" .gz)

rm -rf "$dir"
mkdir -p "$dir/pristine"
"$v8inline" repair-jitdump "$jitdump_gz" -o "$jitdump" 2>/dev/null
python3 - "$recording/perf.data.gz" "$dir/perf.data" "$recorded_at/" "$dir/" <<'EOF'
import gzip, sys
data = gzip.open(sys.argv[1]).read()
old, new = sys.argv[3].encode(), sys.argv[4].encode()
assert data.count(old) == 1 and len(old) == len(new)
open(sys.argv[2], "wb").write(data.replace(old, new))
EOF
perf --buildid-dir "$dir/buildid" inject -j -i "$dir/perf.data" -o "$dir/perf.jit.data"
cp "$dir"/jitted-*.so "$dir/pristine/"
files=$(ls "$dir"/jitted-*.so | wc -l)

restore() { cp -f "$dir"/pristine/jitted-*.so "$dir/"; }
# time_run NAME ARGS...: appends "wall cpu rss_kb" to $dir/NAME.times.
time_run() {
  local name=$1
  shift
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time.out" "$v8inline" debuginfo --log "$log" --jitdump "$jitdump" \
    --buildid-dir "$dir/buildid" "$@" 2>"$dir/$name.stderr"
  awk '{ printf "%s %.3f %s\n", $1, $2 + $3, $4 }' "$dir/time.out" >>"$dir/$name.times"
}
for run in $(seq "$runs"); do
  restore
  time_run all
  restore
  time_run one-thread --threads 1
  time_run again
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
row() {
  local name=$1 label=$2
  printf '| %s | %s s | %s s | %s MB |\n' "$label" \
    "$(cut -d' ' -f1 "$dir/$name.times" | median)" \
    "$(cut -d' ' -f2 "$dir/$name.times" | median)" \
    "$(cut -d' ' -f3 "$dir/$name.times" | median | awk '{ printf "%.1f", $1 / 1024 }')"
}
echo
echo "v8inline debuginfo on $recording ($files jitted files), $runs runs, $(nproc) cores:"
echo
echo '| run | wall | CPU | peak RSS |'
echo '|---|---|---|---|'
row all 'every file rewritten, default threads'
row one-thread 'every file rewritten, --threads 1'
row again 'again: every file already has it'
echo
tail -n +1 "$dir/all.stderr"
python3 - "$dir" <<'EOF'
import os, struct, sys
d = sys.argv[1]
def debug_bytes(path):
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    names = header(shstrndx)[4]
    total = 0
    for i in range(shnum):
        name, _, _, _, offset, size = header(i)[:6]
        end = data.index(b"\0", names + name)
        if data[names + name:end].startswith(b".debug_"):
            total += size
    return total
changed = before_size = after_size = before_debug = after_debug = 0
for name in sorted(os.listdir(d)):
    if not name.startswith("jitted-"):
        continue
    before, after = os.path.join(d, "pristine", name), os.path.join(d, name)
    if open(before, "rb").read() == open(after, "rb").read():
        continue
    changed += 1
    before_size += os.path.getsize(before)
    after_size += os.path.getsize(after)
    before_debug += debug_bytes(before)
    after_debug += debug_bytes(after)
print(f"\n{changed} files rewritten: {before_size} -> {after_size} bytes, "
      f"{(after_size - before_size) / changed:+.0f} bytes per code object; "
      f"debug sections {before_debug / changed:.0f} -> {after_debug / changed:.0f} bytes per file on average")
EOF
