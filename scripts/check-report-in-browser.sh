#!/usr/bin/env bash
# Looks at compare's page (`compare --html`, bench's report.html) as a person
# would: opens each page in headless Chromium at 1366×768 and fails on any
# request that is not a local file (the page is opened offline, from a CI
# artifact), any console error or uncaught exception, a resource that did
# not load (a flame graph it names but that is not there), a page wider than
# the window, or a plot that is not drawn. Saves a screenshot of the first
# screen and of the whole page of each, to look at.
#
#   scripts/check-report-in-browser.sh
#
# Pages, from committed recordings: duets with a slowed inlined function
# (testdata/bench46/duet/results/duet-slower25-01, with its differential
# flame graphs), interleaved runs with a fastest timing and its CPU guard
# (testdata/action base → slower), one run per side (testdata/compare), and
# a benchmark whose name is markup (escaped, not run); and `history report`'s
# pages of fast-xml-parser's releases (testdata/history) and of a commit after
# which V8 stops inlining a function (testdata/inlining-history).
#
# Needs Debian's chromium and node 20 or later (exit 77 without them) (`--experimental-websocket`;
# the DevTools protocol on 127.0.0.1). Writes target/report-check/NAME.html,
# NAME.png (the first screen), NAME-full.png (the whole page) and
# NAME-partN.png (the whole page in screens of 1,100 px).
set -euo pipefail
cd "$(dirname "$0")/.."

out=$PWD/target/report-check
rm -rf "$out"
mkdir -p "$out"

# Exits 77 where it cannot run (no chromium, no node with a WebSocket).
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not found: apt-get install chromium" >&2
  exit 77
fi
if ! node --experimental-websocket --no-warnings -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null; then
  echo "node 20 or later not found (the DevTools protocol needs its WebSocket)" >&2
  exit 77
fi

cargo build --release --quiet
v8inline=$PWD/target/release/v8inline

duet=testdata/bench46/duet/results/duet-slower25-01
"$v8inline" compare "$duet/base" "$duet/head" --source-root /tmp/v8inline-bench46 \
  --flamegraph "$out/duet-diff.svg" --html "$out/duet.html" >/dev/null
"$v8inline" compare testdata/action/base testdata/action/slower --html "$out/interleaved.html" >/dev/null
"$v8inline" compare testdata/compare/recordings/base testdata/compare/recordings/head \
  --flamegraph "$out/one-run-diff.svg" --html "$out/one-run.html" >/dev/null
# A benchmark named with markup: shown as text.
hostile=$(mktemp -d)
cp -r testdata/compare/recordings/base "$hostile/base"
cp -r testdata/compare/recordings/head "$hostile/head"
for side in base head; do
  sed -i 's|"name": *"sort and filter versions"|"name": "<img src=\\"https://example.invalid/x.png\\" onerror=\\"console.error(1)\\"> \&amp; sort"|' \
    "$hostile/$side/benchmarks.json"
done
grep -q 'example.invalid' "$hostile/base/benchmarks.json"
"$v8inline" compare "$hostile/base" "$hostile/head" --html "$out/hostile.html" >/dev/null
rm -rf "$hostile"
# main's history: fast-xml-parser's 22 releases as commits (testdata/history).
history=$(mktemp -d)
while read -r version published; do
  "$v8inline" history add --history "$history" --commit "$version" --date "$published" \
    "testdata/history/results/$version" >/dev/null
done < <(python3 -c 'import json; [print(r["version"], r["published"]) for r in json.load(open("testdata/history/releases.json"))["releases"]]')
"$v8inline" history report --history "$history" --format html -o "$out/history.html"
rm -rf "$history"
# A history where V8 stops inlining a function at c09 (testdata/inlining-history).
history=$(mktemp -d)
for side in testdata/inlining-history/results/c*; do
  "$v8inline" history add --history "$history" --commit "$(basename "$side")" "$side" >/dev/null
done
"$v8inline" history report --history "$history" --format html -o "$out/inlining-history.html"
rm -rf "$history"
pages=(duet interleaved one-run hostile history inlining-history)

profile=$(mktemp -d)
# The flags keep Chromium off the (closed) network and out of any profile;
# DevTools listens on a port of 127.0.0.1 that Chromium picks.
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --remote-debugging-address=127.0.0.1 --remote-debugging-port=0 --user-data-dir="$profile" \
  --window-size=1366,768 about:blank 2>/dev/null &
browser_pid=$!
trap 'kill "$browser_pid" 2>/dev/null || true; wait "$browser_pid" 2>/dev/null || true; rm -rf "$profile"' EXIT
for _ in $(seq 1 100); do
  [ -s "$profile/DevToolsActivePort" ] && break
  sleep 0.2
done
port=$(head -1 "$profile/DevToolsActivePort")

failed=0
for name in "${pages[@]}"; do
  node --experimental-websocket --no-warnings scripts/report-in-browser.mjs "$port" "file://$out/$name.html" \
    "$out/$name" >"$out/$name.json"
  python3 - "$out/$name.json" "$name" <<'PYTHON' || failed=1
import json
import sys

found = json.load(open(sys.argv[1]))
name = sys.argv[2]
problems = []
outside = [url for url in found["requests"] if not url.startswith(("file://", "data:", "about:"))]
if outside:
    problems.append(f"requests beyond local files: {outside}")
if found["errors"]:
    problems.append(f"errors: {found['errors']}")
layout = found["layout"]
if layout["scrollWidth"] > 1366:
    problems.append(f"the page is {layout['scrollWidth']} px wide, wider than the window")
if not layout["plots"] or any(width < 400 or height < 100 for width, height in layout["plots"]):
    problems.append(f"plots missing or too small: {layout['plots']}")
if any(image["width"] == 0 for image in layout["images"]):
    problems.append(f"images not drawn: {layout['images']}")
# At first sight: the table of benchmarks, and the first plot starts on the first screen.
if layout["verdictTableTop"] is None or layout["verdictTableTop"] > 300:
    problems.append(f"the table of benchmarks is not at the top: {layout['verdictTableTop']}")
if layout["firstPlotTop"] is None or layout["firstPlotTop"] > 768:
    problems.append(f"no plot on the first screen: {layout['firstPlotTop']}")
for problem in problems:
    print(f"{name}: {problem}", file=sys.stderr)
print(f"{name}: {len(found['requests'])} local requests, {len(layout['plots'])} plots, "
      f"{len(layout['images'])} images, page {found['height']:.0f} px high" + (": FAILED" if problems else ""))
sys.exit(1 if problems else 0)
PYTHON
done
if [ "$failed" -ne 0 ]; then
  echo "the report check failed: see above, and the screenshots in $out" >&2
  exit 1
fi
echo "report pages checked in Chromium: ${pages[*]} (screenshots in $out)"
