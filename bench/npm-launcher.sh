#!/usr/bin/env bash
# The npm launcher's own cost: `v8inline --version` through the launcher
# (node_modules/.bin/v8inline, a node script that spawns the binary) and
# through `npx v8inline`, against the platform package's binary run
# directly and against node starting with nothing to do (`node -e`), in
# interleaved rounds (so that a slower stretch of the machine
# weighs on all alike); prints each one's median wall time, the median of
# the paired differences to the binary, and the median CPU time (GNU time's
# user + system, 10 ms resolution).
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

node - "$runs" <<'JS'
const { spawnSync } = require("child_process");
const runs = Number(process.argv[2]);
const variants = {
  binary: ["node_modules/@v8inline/linux-x64-gnu/bin/v8inline", ["--version"]],
  // node's own start, which the launcher cannot avoid.
  "node -e": [process.execPath, ["-e", "console.log('v8inline (node)')"]],
  launcher: ["node_modules/.bin/v8inline", ["--version"]],
  npx: ["npx", ["v8inline", "--version"]],
};
// Wall time from here; CPU time (user + system, the process and its
// children) from GNU time, which a loaded machine changes less.
const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const cpu = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let run = 0; run < runs + 2; run++) {
  for (const [name, [program, args]] of Object.entries(variants)) {
    const start = process.hrtime.bigint();
    const result = spawnSync("/usr/bin/time", ["-f", "cpu %U %S", program, ...args], { encoding: "utf8" });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const cpuLine = result.stderr.trim().split("\n").pop().match(/^cpu ([\d.]+) ([\d.]+)$/);
    if (result.status !== 0 || !result.stdout.startsWith("v8inline ") || !cpuLine) {
      throw new Error(`${name}: ${result.status} ${result.stderr}`);
    }
    if (run >= 2) {
      // two warm-up rounds
      times[name].push(ms);
      cpu[name].push((Number(cpuLine[1]) + Number(cpuLine[2])) * 1000);
    }
  }
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const paired = (name) => times[name].map((ms, i) => ms - times.binary[i]);
console.log(`node ${process.version}, ${runs} interleaved runs of --version (medians):`);
for (const name of Object.keys(variants)) {
  const extra = name === "binary" ? "" : ` (paired difference to the binary ${median(paired(name)).toFixed(1)} ms)`;
  console.log(
    `  ${name.padEnd(9)} wall ${median(times[name]).toFixed(1)} ms${extra}, CPU ${median(cpu[name]).toFixed(0)} ms`,
  );
}
JS
