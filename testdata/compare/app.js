// A small real program for `v8inline compare`: semver (an npm package) sorts
// and filters version ranges in a loop for MILLIS ms. `clampPart` is ours,
// small and hot: TurboFan inlines it into `versionKey`. The head variant
// (record.sh writes it) replaces the SLOWDOWN line with more work per call.
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

const versions = [];
for (let index = 0; index < 400; index++) {
  versions.push(`${index % 7}.${(index * 13) % 29}.${(index * 7) % 31}`);
}

const end = Date.now() + millis;
let rounds = 0;
let checksum = 0;
while (Date.now() < end) {
  checksum += sortVersions(versions).length;
  checksum += matching(versions, '>=2.3.0 <5.0.0').length;
  rounds++;
}
console.log(`${rounds} rounds, checksum ${checksum}`);
