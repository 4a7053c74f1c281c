#!/usr/bin/env bash
# Looks at v8inline's flame graph as a person would: renders the SVG of a
# bundled recording in headless Chromium, saves a screenshot, and checks in
# the page as Chromium laid it out (after the SVG's own script has sized the
# labels) that the inlined JavaScript functions have frames of their own,
# colored apart from JIT code, and that the hot ones carry readable labels.
#
#   scripts/check-flamegraph-in-browser.sh [NODE_VERSION]    (default 24)
#
# Needs Debian's chromium (`apt-get install chromium`). Writes
# target/flamegraph-check/node<VERSION>.{svg,png,dom.html}.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-24}
recording=testdata/node$version
out=target/flamegraph-check
mkdir -p "$out"
svg=$out/node$version.svg
png=$out/node$version.png
dom=$out/node$version.dom.html

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not found: apt-get install chromium" >&2
  exit 2
fi

cargo run --release --quiet -- \
  --log "$recording"/codspeed-v8-*.log.gz --jitdump "$recording"/jit-*.dump.gz \
  "$recording"/perf.script.gz --flamegraph "$svg" -o "$out/node$version.folded"

# The flags keep Chromium off the (closed) network and out of any profile.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$(mktemp -d)")
height=$(grep -o '<svg [^>]*' "$svg" | grep -o 'height="[0-9]*"' | head -1 | tr -dc 0-9)
timeout 120 "$browser" "${flags[@]}" --window-size="1200,$height" --screenshot="$png" "file://$PWD/$svg" 2>/dev/null
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$PWD/$svg" >"$dom" 2>/dev/null
test -s "$png"

python3 - "$dom" "$version" <<'PYTHON'
import re
import sys

dom = open(sys.argv[1]).read()
version = sys.argv[2]
# Each frame: <g><title>NAME (N samples, P%)</title><rect ... fill="rgb(R,G,B)" .../><text ...>LABEL</text></g>
frames = re.findall(r'<g><title>([^<]*)</title><rect [^>]*fill="rgb\((\d+),\s*(\d+),\s*(\d+)\)"[^>]*/?>(?:</rect>)?<text [^>]*>([^<]*)</text></g>', dom)
if not frames:
    sys.exit("no frames found in the rendered page")
problems = []
script_dir = f"/tmp/v8inline-testdata/node{version}/"
for function in ["square", "weigh", "combine", "scale"]:
    # Inlined frames are named like the function's own code: `JS:*square /path/deep.js:16:16`.
    own = [frame for frame in frames if re.match(r"[A-Za-z]+:[~^+*']*" + function + " " + re.escape(script_dir), frame[0])]
    if not own:
        problems.append(f"{function}: no frame")
        continue
    # The Java palette colors inlined frames aqua (blue and green over red); JIT code green.
    aqua = [frame for frame in own if int(frame[3]) > int(frame[1]) and int(frame[2]) > int(frame[1])]
    if not aqua:
        problems.append(f"{function}: no frame colored as inlined")
    labelled = [frame for frame in own if frame[4].split(" ")[0].endswith(function)]
    print(f"{function}: {len(own)} frames, {len(aqua)} colored inlined, {len(labelled)} with a readable label")
    if function != "square" and not labelled:
        problems.append(f"{function}: no frame wide enough to show its name")
if problems:
    sys.exit("flame graph check failed: " + "; ".join(problems))
print(f"flame graph of node {version} looks right; screenshot in {sys.argv[1].replace('.dom.html', '.png')}")
PYTHON
