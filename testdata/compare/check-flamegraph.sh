#!/usr/bin/env bash
# Looks at compare's differential flame graph as a reviewer would: renders
# `compare --flamegraph` of testdata/compare's base and head in headless
# Chromium (screenshot in target/compare-check/diff.png) and counts, in the
# page as Chromium laid it out, the frames in the first 1,000 px whose
# label shows whole (`clampPart app.js:10`, or the function alone when
# the frame is narrow), the red frames (grew) and the blue ones (shrank).
# Fails under 25 whole labels.
#
#   testdata/compare/check-flamegraph.sh [STYLE]     (icicle or classic)
#
# Needs Debian's chromium.
set -euo pipefail
cd "$(dirname "$0")/../.."
style=${1:-icicle}
out=target/compare-check
mkdir -p "$out"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "chromium not found: apt-get install chromium" >&2; exit 2; }
target/release/v8inline compare testdata/compare/recordings/base testdata/compare/recordings/head \
  --base-root /tmp/v8inline-compare/base --head-root /tmp/v8inline-compare/head \
  --flamegraph "$out/diff.svg" --flamegraph-style "$style" >/dev/null
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --disable-background-networking
  --disable-component-update --disable-sync --virtual-time-budget=5000 --user-data-dir="$(mktemp -d)")
timeout 120 "$browser" "${flags[@]}" --window-size=1200,1000 --screenshot="$out/diff.png" "file://$PWD/$out/diff.svg" 2>/dev/null
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$PWD/$out/diff.svg" >"$out/diff.dom.html" 2>/dev/null
python3 - "$out/diff.dom.html" <<'PYTHON'
import html, re, sys
dom = open(sys.argv[1]).read()
frame = re.compile(r'<g><title>([^<]*)</title><rect x="[^"]*" y="([\d.]+)"[^>]*fill="rgb\((\d+),\s*(\d+),\s*(\d+)\)"[^>]*/?>(?:</rect>)?'
                   r'(?:<text ([^>]*?)/>|<text ([^>]*)>([^<]*)</text>)</g>')
whole = red = blue = 0
examples = []
for title, y, r, g, b, empty, attributes, text in frame.findall(dom):
    if float(y) >= 1000:
        continue
    attributes = empty or attributes
    label = re.search(r'fg:label="([^"]*)"', attributes)
    short = re.search(r'fg:short="([^"]*)"', attributes)
    name = html.unescape(title).rsplit(" (", 1)[0]
    wanted = [html.unescape(label.group(1)) if label else re.sub(r"_\[[ijk]\]$", "", name)]
    if short:
        wanted.append(html.unescape(short.group(1)))
    text = html.unescape(text)
    if text and text in wanted:
        whole += 1
        examples.append(text)
    r, g, b = int(r), int(g), int(b)
    if r > b + 20:
        red += 1
    elif b > r + 20:
        blue += 1
print(f"{whole} whole labels in the first 1,000 px ({red} red frames, {blue} blue); e.g. {examples[:8]}")
sys.exit(0 if whole >= 25 else 1)
PYTHON
