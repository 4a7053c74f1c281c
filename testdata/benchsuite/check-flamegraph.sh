#!/usr/bin/env bash
# Looks at compare's differential flame graphs of the real suite (base-1
# against head) as a reviewer would: OUT.svg and one OUT-<slug>.svg per
# benchmark, each rendered in headless Chromium (screenshots in
# target/benchsuite-check/) and checked by testdata/compare/check-flamegraph.sh's
# count of whole labels in the first 1,000 px (at least 25) and of the red
# (grew) and blue (shrank) frames.
#
#   testdata/benchsuite/check-flamegraph.sh [STYLE]     (icicle or classic)
#
# Needs Debian's chromium.
set -euo pipefail
cd "$(dirname "$0")/../.."
style=${1:-icicle}
out=target/benchsuite-check
rm -rf "$out"
mkdir -p "$out"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "chromium not found: apt-get install chromium" >&2; exit 2; }
target/release/v8inline compare testdata/benchsuite/base-1 testdata/benchsuite/head \
  --flamegraph "$out/diff.svg" --flamegraph-style "$style" >/dev/null
status=0
for svg in "$out"/diff*.svg; do
  name=$(basename "$svg" .svg)
  flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --disable-background-networking
    --disable-component-update --disable-sync --virtual-time-budget=5000 --user-data-dir="$(mktemp -d)")
  timeout 120 "$browser" "${flags[@]}" --window-size=1200,1000 --screenshot="$out/$name.png" "file://$PWD/$svg" 2>/dev/null
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$PWD/$svg" >"$out/$name.dom.html" 2>/dev/null
  # The counting half of testdata/compare/check-flamegraph.sh, on this DOM.
  echo -n "$name: "
  sed -n "/^python3 - /,/^PYTHON$/p" testdata/compare/check-flamegraph.sh | sed '1d;$d' |
    python3 - "$out/$name.dom.html" || status=1
done
exit $status
