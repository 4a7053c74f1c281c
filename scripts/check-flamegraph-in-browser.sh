#!/usr/bin/env bash
# Looks at v8inline's flame graphs as a person would: renders each SVG in
# headless Chromium, saves a screenshot, and checks in the page as Chromium
# laid it out (after the SVG's own script has sized the labels) that
#
# - counts are in their unit: every frame's tooltip says ms for cpu-clock
#   recordings, samples for V8's ticks, and the subtitle names the event and
#   the total;
# - JavaScript frames are labelled `function file:line` (`kernel deep.js:32`,
#   `parseStatement acorn.js:1015`), the labels sized by the page's script
#   from that label, the full name (path, column) and the tier shares in the tooltip;
# - a function is one box whatever its tier (`JS:combine ...`, icicle style);
# - search (the page's `?s=` parameter) finds frames by their label and by
#   their full name;
# - the inlined JavaScript functions have frames of their own, colored apart
#   from JIT code, and the hot ones carry readable labels.
#
#   scripts/check-flamegraph-in-browser.sh [NODE_VERSION]    (default 24)
#
# Graphs: the bundled perf recording of node VERSION (cpu-clock), its
# `--prof` ticks, the bundled real app (testdata/realapp: acorn, marked), and
# `v8inline record -- deno run` of deep.js where deno is installed (in
# /opt/deno as .ci/run installs it, or on PATH; skipped with a message
# otherwise).
#
# Needs Debian's chromium (`apt-get install chromium`). Writes
# target/flamegraph-check/NAME.{svg,png,dom.html} for NAME in node<VERSION>,
# node<VERSION>-ticks, realapp, deno.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-24}
recording=testdata/node$version
out=target/flamegraph-check
mkdir -p "$out"

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not found: apt-get install chromium" >&2
  exit 2
fi

cargo build --release --quiet
v8inline=$PWD/target/release/v8inline

# node VERSION under perf, and V8's ticks of the same program.
"$v8inline" --log "$recording"/codspeed-v8-*.log.gz --jitdump "$recording"/jit-*.dump.gz \
  "$recording"/perf.script.gz --flamegraph "$out/node$version.svg" -o "$out/node$version.folded"
"$v8inline" --ticks "$recording"/prof/prof-*.log.gz --flamegraph "$out/node$version-ticks.svg" \
  -o "$out/node$version-ticks.folded" 2>/dev/null
# A real app on npm packages.
realapp=testdata/realapp
# Without source maps: marked ships one, which maps its frames to marked's
# own sources where testdata/realapp/record.sh left the packages on this
# machine, and the labels checked below are those of the scripts as run.
"$v8inline" --log "$realapp"/codspeed-v8-*.log.gz --jitdump "$realapp"/jit-*.dump.gz --no-source-maps \
  "$realapp"/perf.script.gz --flamegraph "$out/realapp.svg" -o "$out/realapp.folded"
graphs=("node$version" "node$version-ticks" realapp)

# Deno, recorded here.
deno=$(compgen -G "/opt/deno/node_modules/@deno/*/deno" | head -1 || true)
[ -n "$deno" ] || deno=$(command -v deno || true)
if [ -n "$deno" ]; then
  work=$(mktemp -d)
  cp testdata/programs/deep.js testdata/programs/lib.js testdata/programs/deno/* "$work"
  (cd "$work" && DENO_NO_UPDATE_CHECK=1 "$v8inline" record --output-dir out -- "$deno" run -A main.js 1500 >/dev/null)
  cp "$work/out/flamegraph.svg" "$out/deno.svg"
  rm -rf "$work"
  graphs+=(deno)
else
  echo "deno not installed (npm install --prefix /opt/deno deno): the Deno flame graph is not checked" >&2
fi

# A benchmark suite (testdata/benchsuite: tinybench timing the yaml library)
# recorded as its users run it: each benchmark's own graph, and compare's
# differential graph of each benchmark (the recording against itself).
suite=$(mktemp -d)
cp -r testdata/benchsuite/package.json testdata/benchsuite/bench.mjs testdata/benchsuite/inputs "$suite"
benchmark_graphs=()
if (cd "$suite" && npm install --no-audit --no-fund --silent >/dev/null 2>&1); then
  (cd "$suite" && "$v8inline" record --output-dir out -- npm run bench >/dev/null 2>&1)
fi
if [ -d "$suite/out/benchmarks" ]; then
  "$v8inline" compare "$suite/out" "$suite/out" --flamegraph "$suite/diff.svg" >/dev/null
  for directory in "$suite"/out/benchmarks/*/; do
    slug=$(basename "$directory")
    cp "$directory/flamegraph.svg" "$out/benchmark-$slug.svg"
    benchmark_graphs+=("benchmark-$slug")
  done
  for diff in "$suite"/diff-*.svg; do
    name=benchmark-diff-$(basename "$diff" .svg | sed 's/^diff-//')
    cp "$diff" "$out/$name.svg"
    benchmark_graphs+=("$name")
  done
else
  echo "npm install failed or perf could not record: the benchmark graphs are not checked" >&2
fi
rm -rf "$suite"

# The flags keep Chromium off the (closed) network and out of any profile.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --virtual-time-budget=5000 --user-data-dir="$(mktemp -d)")
# Search terms per graph: a label as shown, and a piece of a full name.
declare -A searches=(
  ["node$version"]="combine deep.js:26|JS:combine /tmp/"
  ["node$version-ticks"]="combine deep.js:26|JS:combine /tmp/"
  [realapp]="parseStatement acorn.js:1015|pp\\\$8\.parseStatement /tmp/"
  [deno]="combine deep.js:26|JS:combine file:///"
)
for name in "${graphs[@]}"; do
  svg=$out/$name.svg
  height=$(grep -o '<svg [^>]*' "$svg" | grep -o 'height="[0-9]*"' | head -1 | tr -dc 0-9)
  timeout 120 "$browser" "${flags[@]}" --window-size="1200,$height" --screenshot="$out/$name.png" "file://$PWD/$svg" 2>/dev/null
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$PWD/$svg" >"$out/$name.dom.html" 2>/dev/null
  test -s "$out/$name.png"
  IFS='|' read -r -a terms <<<"${searches[$name]}"
  for index in "${!terms[@]}"; do
    query=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "${terms[$index]}")
    timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$PWD/$svg?s=$query" >"$out/$name.search$index.dom.html" 2>/dev/null
  done
done

python3 - "$out" "$version" "${graphs[@]}" <<'PYTHON'
import html
import re
import sys

out, version, graphs = sys.argv[1], sys.argv[2], sys.argv[3:]
# The perf recording ran in /tmp/v8inline-testdata/nodeVERSION, the --prof one in profVERSION.
deep = rf"/tmp/v8inline-testdata/(?:node|prof){version}/deep\.js"
lib = rf"/tmp/v8inline-testdata/(?:node|prof){version}/lib\.js"
# Per graph: the unit of the counts, the subtitle, and the JavaScript
# functions to find: (label, full name pattern, inlined, wide enough to be
# read whole). The full names are V8's: `JS:*combine /path/deep.js:26:17`.
# The default (icicle) style says which frames it leaves out.
left_out = r"; frames under 0\.1% not drawn"
# The icicle draws a function once whatever its tier (`JS:combine ...`): its
# tooltip ends with the tier shares (`; TurboFan 80%, interpreted 20%`).
tiers = r"(?:; (?:(?:TurboFan|Maglev|Sparkplug|interpreted) [\d.]+%(?:, )?)+)?"
clock = r"cpu-clock: [\d,]+ samples, [\d.]+ m?s of CPU time" + left_out
node_functions = [
    ("kernel deep.js:32", rf"JS:[~^+*o']*kernel {deep}:32:16", False, True),
    ("combine deep.js:26", rf"JS:[~^+*o']*combine {deep}:26:17", True, True),
    ("weigh deep.js:20", rf"JS:[~^+*o']*weigh {deep}:20:15", True, True),
    ("scale lib.js:10", rf"JS:[~^+*o']*scale {lib}:10:15", True, True),
    ("square deep.js:16", rf"JS:[~^+*o']*square {deep}:16:16", True, False),
]
acorn = r"/tmp/v8inline-realapp/node_modules/acorn/dist/acorn\.js"
marked = r"file:///tmp/v8inline-realapp/node_modules/marked/lib/marked\.esm\.js"
specs = {
    f"node{version}": ("ms", clock, node_functions),
    f"node{version}-ticks": ("samples", r"V8 ticks: [\d,]+ samples" + left_out, [
        (label, pattern, inlined, label.startswith(("kernel", "combine"))) for label, pattern, inlined, _ in node_functions
    ]),
    "realapp": ("ms", clock, [
        ("parseStatement acorn.js:1015", rf"JS:[~^+*o']*pp\$8\.parseStatement {acorn}:1015:33", False, True),
        ("parseExpression acorn.js:2737", rf"JS:[~^+*o']*pp\$5\.parseExpression {acorn}:2737:34", True, False),
        ("parseTopLevel acorn.js:892", rf"JS:[~^+*o']*pp\$8\.parseTopLevel {acorn}:892:\d+", False, True),
        ("lex marked.esm.js:53", rf"JS:[~^+*o']*lex {marked}:53:\d+", False, False),
    ]),
}
deno_deep = r"file:///tmp/[^ ]*/deep\.js"
specs["deno"] = (None, None, [
    ("kernel deep.js:32", rf"JS:[~^+*o']*kernel {deno_deep}:32:16", False, True),
    ("combine deep.js:26", rf"JS:[~^+*o']*combine {deno_deep}:26:17", True, True),
    ("weigh deep.js:20", rf"JS:[~^+*o']*weigh {deno_deep}:20:15", True, False),
    ("square deep.js:16", rf"JS:[~^+*o']*square {deno_deep}:16:16", True, False),
])

# Each frame: <g><title>NAME (N UNIT, P%)</title><rect ... fill="rgb(R,G,B)" .../><text [fg:label="LABEL"] ...>TEXT</text></g>
# (an empty text is dumped as <text .../>).
frame_pattern = re.compile(
    r'<g><title>([^<]*)</title><rect [^>]*fill="rgb\((\d+),\s*(\d+),\s*(\d+)\)"[^>]*/?>(?:</rect>)?'
    r'(?:<text ([^>]*?)/>|<text ([^>]*)>([^<]*)</text>)</g>'
)


def frames_of(dom):
    frames = []
    for title, red, green, blue, empty_attributes, attributes, text in frame_pattern.findall(dom):
        label = re.search(r'fg:label="([^"]*)"', empty_attributes or attributes)
        short = re.search(r'fg:short="([^"]*)"', empty_attributes or attributes)
        frames.append({
            "title": html.unescape(title),
            "rgb": (int(red), int(green), int(blue)),
            "label": html.unescape(label.group(1)) if label else None,
            "short": html.unescape(short.group(1)) if short else None,
            "text": html.unescape(text),
        })
    return frames


problems = []
for graph in graphs:
    dom = open(f"{out}/{graph}.dom.html").read()
    unit, subtitle, functions = specs[graph]
    frames = frames_of(dom)
    if not frames or len(frames) != dom.count("<g><title>"):
        problems.append(f"{graph}: {len(frames)} frames read of {dom.count('<g><title>')} in the rendered page")
        continue
    # The page's script ran: it makes the drawing fluid (no width on the root).
    root = re.search(r"<svg [^>]*>", dom).group(0)
    if ' width="' in root:
        problems.append(f"{graph}: the page's script did not run")
    shown_subtitle = re.search(r'<text id="subtitle"[^>]*>([^<]*)</text>', dom)
    shown_subtitle = html.unescape(shown_subtitle.group(1)) if shown_subtitle else ""
    if unit is None:  # deno: perf if it could record here, else V8's ticks
        unit = "samples" if shown_subtitle.startswith("V8 ticks") else "ms"
        subtitle = r"V8 ticks: [\d,]+ samples" + left_out if unit == "samples" else clock
    if not re.fullmatch(subtitle, shown_subtitle):
        problems.append(f"{graph}: subtitle {shown_subtitle!r}")
    wrong_unit = [frame["title"] for frame in frames if not re.search(rf" \([\d,]+ {unit}, [\d.]+%{tiers}\)$", frame["title"])]
    if wrong_unit:
        problems.append(f"{graph}: {len(wrong_unit)} tooltips not in {unit}, e.g. {wrong_unit[0]!r}")
    # A labelled frame shows its label, its function alone (fg:short), or the
    # start of it, never the full name.
    for frame in frames:
        label, text = frame["label"], frame["text"]
        if label is not None and text and not (text == label or text == frame["short"] or (text.endswith("..") and label.startswith(text[:-2]))):
            problems.append(f"{graph}: frame labelled {label!r} shows {text!r}")
            break
    print(f"{graph}: {len(frames)} frames; {shown_subtitle}")
    for label, pattern, inlined, wide in functions:
        own = [frame for frame in frames if re.fullmatch(pattern + rf" \([\d,]+ {unit}, [\d.]+%{tiers}\)", frame["title"])]
        if not own:
            problems.append(f"{graph}: no frame of {label} ({pattern})")
            continue
        mislabelled = [frame["label"] for frame in own if frame["label"] != label]
        if mislabelled:
            problems.append(f"{graph}: {label} frames labelled {mislabelled[:3]}")
        # The Java palette colors inlined frames aqua (blue and green over red); JIT code green.
        aqua = [frame for frame in own if frame["rgb"][2] > frame["rgb"][0] and frame["rgb"][1] > frame["rgb"][0]]
        if inlined and not aqua:
            problems.append(f"{graph}: {label}: no frame colored as inlined")
        whole = [frame for frame in own if frame["text"] == label]
        print(f"  {label}: {len(own)} frames, {len(aqua)} colored inlined, {len(whole)} showing the whole label")
        if wide and not whole:
            problems.append(f"{graph}: {label}: no frame wide enough to show its label")
    # Search by a label and by a full name highlights frames.
    index = 0
    while True:
        try:
            searched = open(f"{out}/{graph}.search{index}.dom.html").read()
        except FileNotFoundError:
            break
        matched = re.search(r'<text id="matched"[^>]*>Matched: ([\d.]+)%</text>', searched)
        highlighted = searched.count('fill="rgb(230,0,230)"')
        print(f"  search {index}: matched {matched.group(1) if matched else 'nothing'}%, {highlighted} frames highlighted")
        if not matched or float(matched.group(1)) <= 0 or highlighted == 0:
            problems.append(f"{graph}: search {index} found nothing")
        index += 1
if problems:
    sys.exit("flame graph check failed:\n  " + "\n  ".join(problems))
print(f"flame graphs look right; screenshots in {out}/: " + ", ".join(f"{graph}.png" for graph in graphs))
PYTHON

# Each benchmark's graph, and its differential graph: Chromium shows the SVG,
# not its XML error page; the benchmark's graph starts at the benchmark, its
# root labelled with the benchmark's name and its tooltip saying what it
# stands for; at least 25 whole labels in the first 1,000 px of each.
for name in "${benchmark_graphs[@]}"; do
  svg=$out/$name.svg
  timeout 120 "$browser" "${flags[@]}" --window-size=1200,1000 --screenshot="$out/$name.png" "file://$PWD/$svg" 2>/dev/null
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$PWD/$svg" >"$out/$name.dom.html" 2>/dev/null
  test -s "$out/$name.png"
done
[ ${#benchmark_graphs[@]} -eq 0 ] || python3 - "$out" "${benchmark_graphs[@]}" <<'PYTHON'
import html
import re
import sys
import xml.etree.ElementTree as ElementTree

out, graphs = sys.argv[1], sys.argv[2:]
frame = re.compile(r'<g><title>([^<]*)</title><rect x="[^"]*" y="([\d.]+)"[^>]*/?>(?:</rect>)?'
                   r'(?:<text ([^>]*?)/>|<text ([^>]*)>([^<]*)</text>)</g>')
names = {"parse-resource-map-yaml": "parse resource_map.yaml", "parse-regen-apis-config-yaml": "parse regen_apis_config.yaml"}
problems = []
for graph in graphs:
    # A strict XML parser reads the file as written.
    try:
        ElementTree.parse(f"{out}/{graph}.svg")
    except ElementTree.ParseError as error:
        problems.append(f"{graph}.svg: not well-formed XML: {error}")
    dom = open(f"{out}/{graph}.dom.html").read()
    if "parsererror" in dom or "This page contains the following errors" in dom:
        problems.append(f"{graph}: Chromium shows an XML error page")
        continue
    whole = []
    for title, y, empty, attributes, text in frame.findall(dom):
        if float(y) >= 1000:
            continue
        attributes = empty or attributes
        label = re.search(r'fg:label="([^"]*)"', attributes)
        short = re.search(r'fg:short="([^"]*)"', attributes)
        name = html.unescape(title).rsplit(" (", 1)[0]
        wanted = [html.unescape(label.group(1)) if label else re.sub(r"_\[[ijk]\]$", "", name)]
        if short:
            wanted.append(html.unescape(short.group(1)))
        if html.unescape(text) and html.unescape(text) in wanted:
            whole.append(html.unescape(text))
    if not graph.startswith("benchmark-diff-"):
        benchmark = names[graph.removeprefix("benchmark-")]
        roots = [html.unescape(title) for title, *_ in frame.findall(dom) if html.unescape(title).startswith(benchmark + " (")]
        if not roots or "folded into this root" not in roots[0]:
            problems.append(f"{graph}: no root frame {benchmark!r} saying what it stands for")
    print(f"{graph}: {len(whole)} whole labels in the first 1,000 px, e.g. {whole[:6]}")
    if len(whole) < 25:
        problems.append(f"{graph}: {len(whole)} whole labels in the first 1,000 px")
if problems:
    sys.exit("benchmark flame graph check failed:\n  " + "\n  ".join(problems))
print("benchmark flame graphs open cleanly; screenshots in " + out + "/: " + ", ".join(f"{graph}.png" for graph in graphs))
PYTHON
