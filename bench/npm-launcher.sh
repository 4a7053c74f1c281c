#!/usr/bin/env bash
# The npm launcher's own cost: `v8inline --version` through the launcher
# (node_modules/.bin/v8inline, a node script that spawns the binary) and
# through `npx v8inline`, against the platform package's binary run
# directly and against node starting with nothing to do (`node -e`), in
# interleaved rounds (so that a slower stretch of the machine
# weighs on all alike); prints each one's median wall time, the median of
# the paired differences to the binary, and the median CPU time (user +
# system, from wait4).
#
#   bench/npm-launcher.sh [RUNS]        (default 40)
#
# Installs target/npm's tarballs (scripts/npm-pack.sh writes them) into
# target/npm/bench-project with npm, offline.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-40}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
launcher_tarball=$PWD/target/npm/v8inline-$version.tgz
platform_tarball=$PWD/target/npm/v8inline-linux-x64-gnu-$version.tgz
[ -f "$launcher_tarball" ] && [ -f "$platform_tarball" ] || {
  echo "npm-launcher.sh: no tarballs in target/npm: run scripts/npm-pack.sh first" >&2
  exit 1
}
project=target/npm/bench-project
rm -rf "$project"
mkdir -p "$project"
cat >"$project/package.json" <<JSON
{ "name": "bench-project", "version": "1.0.0", "private": true,
  "dependencies": { "v8inline": "file:$launcher_tarball", "@v8inline/linux-x64-gnu": "file:$platform_tarball" },
  "overrides": { "@v8inline/linux-x64-gnu": "file:$platform_tarball" } }
JSON
(cd "$project" && npm install --silent --offline --no-audit --no-fund)
cd "$project"

python3 - "$runs" <<'PY'
import os, statistics, sys, time

runs = int(sys.argv[1])
variants = {
    "binary": ["node_modules/@v8inline/linux-x64-gnu/bin/v8inline", "--version"],
    # node's own start, which the launcher cannot avoid.
    "node -e": ["node", "-e", "console.log('v8inline (node)')"],
    "launcher": ["node_modules/.bin/v8inline", "--version"],
    "npx": ["npx", "v8inline", "--version"],
}
wall = {name: [] for name in variants}
cpu = {name: [] for name in variants}
for run in range(runs + 2):  # two warm-up rounds
    for name, argv in variants.items():
        start = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
        # wait4: the child's CPU time (user + system, its children included) in microseconds.
        _, status, usage = os.wait4(pid, 0)
        elapsed = (time.perf_counter() - start) * 1000
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{name}: exit status {status}")
        if run >= 2:
            wall[name].append(elapsed)
            cpu[name].append((usage.ru_utime + usage.ru_stime) * 1000)
print(f"node {os.popen('node --version').read().strip()}, {runs} interleaved rounds of --version (medians):")
for name in variants:
    paired = "" if name == "binary" else (
        f" (paired difference to the binary {statistics.median(w - b for w, b in zip(wall[name], wall['binary'])):.1f} ms)"
    )
    print(f"  {name:<9} wall {statistics.median(wall[name]):.1f} ms{paired}, CPU {statistics.median(cpu[name]):.1f} ms")
PY
