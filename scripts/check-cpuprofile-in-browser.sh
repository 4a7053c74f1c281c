#!/usr/bin/env bash
# Looks at v8inline's .cpuprofile as a person would, in a viewer no one here
# wrote: speedscope's release build from npm, opened in headless Chromium the
# way speedscope's own command line opens a file (`#localProfilePath=` a .js
# file that calls `speedscope.loadFileFromBase64`, read offline with
# --allow-file-access-from-files). It checks in the page as speedscope laid
# it out that
#
# - the sandwich view's table (DOM) lists the inlined functions of the
#   bundled deep chain (square, weigh, combine; kernel, which they were
#   inlined into) with self shares within 1 percentage point of v8inline's
#   own JSON report (--report json) of the same thread, and total shares
#   within 1 point of the report's inclusive share plus the garbage
#   collector's: speedscope, as DevTools, draws a `(garbage collector)`
#   sample on top of the stack sampled before it (V8's GC samples carry no
#   stack), so a function's total there includes the collections that
#   followed it;
# - the real app (testdata/realapp, acorn and marked) too, for its five
#   JavaScript functions with the most self time;
#
# and saves screenshots of the sandwich, left-heavy (flame graph) and
# time-order views, which are canvases: look at them.
#
#   scripts/check-cpuprofile-in-browser.sh [NODE_VERSION]    (default 24)
#
# Needs Debian's chromium (`apt-get install chromium`) and npm (speedscope is
# installed into target/speedscope on first use); exits 77, saying why,
# where either is missing or speedscope cannot be installed. Writes
# target/cpuprofile-check/NAME.{cpuprofile,report.json,sandwich.dom.html,
# sandwich.png,sandwich-top.png,left-heavy.png,time-order.png} for NAME in
# node<VERSION>, realapp.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-24}
out=target/cpuprofile-check
mkdir -p "$out"

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not found: apt-get install chromium" >&2
  exit 77
fi
speedscope=$PWD/target/speedscope
if [ ! -f "$speedscope/node_modules/speedscope/dist/release/index.html" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: speedscope cannot be installed" >&2
    exit 77
  fi
  mkdir -p "$speedscope"
  # npm 11 wants a package.json where it installs.
  [ -f "$speedscope/package.json" ] || echo '{"name": "v8inline-speedscope-check", "private": true}' >"$speedscope/package.json"
  if ! npm install --silent --no-audit --no-fund --prefix "$speedscope" speedscope@1; then
    echo "speedscope could not be installed from npm" >&2
    exit 77
  fi
fi
index=$speedscope/node_modules/speedscope/dist/release/index.html
echo "speedscope $(node -p 'require(process.argv[1]).version' "$speedscope/node_modules/speedscope/package.json" 2>/dev/null || echo '?')"

cargo build --release --quiet
v8inline=$PWD/target/release/v8inline

# NAME RECORDING: the .cpuprofile of the thread with the most samples, and
# the JSON report of that thread's samples alone (the perf script's records
# of its tid).
profile() {
  local name=$1 recording=$2
  "$v8inline" --log "$recording"/codspeed-v8-*.log.gz --jitdump "$recording"/jit-*.dump.gz \
    "$recording"/perf.script.gz -o /dev/null --cpuprofile "$out/$name.cpuprofile" 2>"$out/$name.note"
  cat "$out/$name.note" >&2
  local tid
  tid=$(grep -o 'tid [0-9]*' "$out/$name.note" | head -1 | cut -d' ' -f2)
  python3 - "$recording/perf.script.gz" "$tid" >"$out/$name.thread.script" <<'PYTHON'
import gzip
import sys

path, tid = sys.argv[1], sys.argv[2]
# A record is its event line (`comm [pid/]tid time: period event:`) and its
# stack lines, up to a blank line.
for record in gzip.open(path, "rt", errors="surrogateescape").read().split("\n\n"):
    fields = record.lstrip("\n").split(None, 2)
    if len(fields) >= 2 and fields[1].split("/")[-1] == tid:
        sys.stdout.write(record.strip("\n") + "\n\n")
PYTHON
  "$v8inline" --log "$recording"/codspeed-v8-*.log.gz --jitdump "$recording"/jit-*.dump.gz \
    "$out/$name.thread.script" -o /dev/null --report json --report-output "$out/$name.report.json" 2>/dev/null
  # What speedscope's command line does with a file.
  python3 - "$out/$name.cpuprofile" "$out/$name.load.js" <<'PYTHON'
import base64
import json
import os
import sys

source, loader = sys.argv[1], sys.argv[2]
data = base64.b64encode(open(source, "rb").read()).decode()
with open(loader, "w") as file:
    file.write(f"speedscope.loadFileFromBase64({json.dumps(os.path.basename(source))}, {json.dumps(data)})")
PYTHON
}
profile "node$version" "testdata/node$version"
profile realapp testdata/realapp

# The flags keep Chromium off the (closed) network and out of any profile;
# file URLs may load file URLs, as speedscope's loader script is one.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --allow-file-access-from-files --virtual-time-budget=10000)
for name in "node$version" realapp; do
  url="file://$index#localProfilePath=$PWD/$out/$name.load.js"
  # view:size; the README shows node VERSION's left-heavy view and the top
  # of its sandwich table at these sizes (docs/speedscope-*.png).
  for shot in sandwich:1400,900 left-heavy:1400,660 time-order:1400,900 sandwich-top:1000,190; do
    view=${shot%%:*}
    timeout 120 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d)" --window-size="${shot#*:}" \
      --screenshot="$out/$name.$view.png" "$url&view=${view%-top}" 2>/dev/null
    test -s "$out/$name.$view.png"
  done
  # Tall enough that the table renders many rows. Headless Chromium now and
  # then lays the page out before speedscope fills its (virtualized) table,
  # more often the taller the window: try a few heights until rows are there.
  for height in 16000 10000 20000 12000 8000; do
    timeout 120 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d)" --window-size=1400,$height \
      --dump-dom "$url&view=sandwich" >"$out/$name.sandwich.dom.html" 2>/dev/null || true
    [ "$(grep -o '<tr' "$out/$name.sandwich.dom.html" | wc -l)" -gt 1 ] && break
  done
done

python3 - "$out" "$version" <<'PYTHON'
import html
import json
import re
import sys

out, version = sys.argv[1], sys.argv[2]
UNITS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1000.0, "min": 60000.0}


def duration(text):
    """speedscope's `12.34ms (1.5%)` as milliseconds."""
    match = re.match(r"([\d.]+)(ns|µs|us|ms|s|min)\b", text)
    if not match:
        raise ValueError(f"not a duration: {text!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


def speedscope_table(name):
    """The sandwich view's rows: symbol -> (total ms, self ms)."""
    dom = open(f"{out}/{name}.sandwich.dom.html").read()
    rows = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", dom, re.S):
        cells = [html.unescape(cell).strip() for cell in re.split(r"<[^>]+>", row)]
        cells = [cell for cell in cells if cell]
        if len(cells) < 3 or cells[0] == "Total":
            continue
        total, self_time, symbol = duration(cells[0]), duration(cells[1]), cells[2]
        # Functions of one name in different files are different rows.
        previous = rows.get(symbol, (0.0, 0.0))
        rows[symbol] = (previous[0] + total, previous[1] + self_time)
    return rows


def report_functions(name):
    report = json.load(open(f"{out}/{name}.report.json"))
    return report, {(function["name"], function.get("file")): function for function in report["functions"]}


problems = []
deep = f"/tmp/v8inline-testdata/node{version}/deep.js"
checks = {
    f"node{version}": [(function, deep) for function in ("square", "weigh", "combine", "kernel")],
}
report, _ = report_functions("realapp")
top = [function for function in report["functions"] if function.get("file")][:5]
checks["realapp"] = [(function["name"], function["file"]) for function in top]

for name, functions in checks.items():
    rows = speedscope_table(name)
    if not rows:
        problems.append(f"{name}: speedscope's table is empty")
        continue
    # Every sample's time is some row's self time: their sum is the total.
    total = sum(self_time for _, self_time in rows.values())
    collector = 100 * rows.get("(garbage collector)", (0.0, 0.0))[0] / total
    report, by_function = report_functions(name)
    print(f"{name}: speedscope lists {len(rows)} functions, {total:.2f} ms, (garbage collector) {collector:.2f}%; "
          f"the report {report['total']} samples")
    print(f"  {'function':<34} {'self: speedscope':>17} {'report':>8} {'total: speedscope':>18} {'report':>8}")
    for function, file in functions:
        reported = by_function.get((function, file))
        # speedscope shows an anonymous function as (anonymous), as the report does.
        shown = rows.get(function)
        if reported is None or shown is None:
            problems.append(f"{name}: {function} missing (report: {reported is not None}, speedscope: {shown is not None})")
            continue
        self_share, total_share = 100 * shown[1] / total, 100 * shown[0] / total
        report_self, report_total = 100 * reported["self_share"], 100 * reported["inclusive_share"]
        print(f"  {function[:34]:<34} {self_share:>16.2f}% {report_self:>7.2f}% {total_share:>17.2f}% {report_total:>7.2f}%")
        total_agrees = report_total - 1 <= total_share <= report_total + collector + 1
        if abs(self_share - report_self) > 1 or not total_agrees:
            problems.append(f"{name}: {function}: speedscope {self_share:.2f}% self, {total_share:.2f}% total; "
                            f"report {report_self:.2f}%, {report_total:.2f}%")
if problems:
    sys.exit("cpuprofile check failed:\n  " + "\n  ".join(problems))
print(f"speedscope shows the inlined functions as v8inline reports them; screenshots in {out}/")
PYTHON
