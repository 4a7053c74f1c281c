// A small real program for `v8inline compare`: semver (an npm package) sorts
// and filters version ranges in a loop for MILLIS ms. `clampPart` is ours,
// small and hot: TurboFan inlines it into `versionKey`. The head variant
// (record.sh writes it) replaces the SLOWDOWN line with more work per call;
// the "interpreted" variant also keeps clampPart from being optimized
// (`%NeverOptimizeFunction`, run with --allow-natives-syntax).
'use strict';
const semver = require('semver');

const millis = Number(process.env.MILLIS || 3000);

function clampPart(part) {
  let value = part < 0 ? 0 : part > 99999 ? 99999 : part;
  // SLOWDOWN
  return value;
}

function versionKey(version) {
  const parsed = semver.parse(version);
  return clampPart(parsed.major) * 1e10 + clampPart(parsed.minor) * 1e5 + clampPart(parsed.patch);
}

function sortVersions(versions) {
  const keyed = versions.map((version) => ({ version, key: versionKey(version) }));
  keyed.sort((left, right) => left.key - right.key);
  return keyed.map((entry) => entry.version);
}

function matching(versions, range) {
  return versions.filter((version) => semver.satisfies(version, range));
}

// NEVER_OPTIMIZE

const versions = [];
for (let index = 0; index < 400; index++) {
  versions.push(`${index % 7}.${(index * 13) % 29}.${(index * 7) % 31}`);
}

// Each round is timed, as a benchmark harness times its iterations: the
// mean, spread and count go to $TIMINGS (JSON, nanoseconds) when set.
const times = [];
const end = Date.now() + millis;
let checksum = 0;
while (Date.now() < end) {
  const start = process.hrtime.bigint();
  checksum += sortVersions(versions).length;
  checksum += matching(versions, '>=2.3.0 <5.0.0').length;
  times.push(Number(process.hrtime.bigint() - start));
}
console.log(`${times.length} rounds, checksum ${checksum}`);
if (process.env.TIMINGS) {
  const mean = times.reduce((sum, time) => sum + time, 0) / times.length;
  const variance = times.reduce((sum, time) => sum + (time - mean) ** 2, 0) / (times.length - 1);
  const sorted = [...times].sort((left, right) => left - right);
  const statistics = {
    mean,
    stddev: Math.sqrt(variance),
    median: sorted[Math.floor(sorted.length / 2)],
    min: sorted[0],
    max: sorted[sorted.length - 1],
    samples: times.length,
  };
  require('fs').writeFileSync(process.env.TIMINGS, JSON.stringify(statistics));
}
