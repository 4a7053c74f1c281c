'use strict';
// Helpers in a second script: TurboFan and Maglev inline them across scripts.
function mix(value) {
  let hash = value | 0;
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0x5bd1e995);
  return hash ^ (hash >>> 15);
}

function scale(value, factor) {
  return (value * factor) % 1000003;
}

module.exports = { mix, scale };
