'use strict';
// The program behind testdata/killed: a benchmark's steady state. deep.js's
// inlined chain (kernel -> combine -> weigh -> square, with lib.js's mix and
// scale), called in a loop as a benchmark runner iterates its task. Once
// kernel is optimized nothing new is compiled, so the jitdump records of the
// hot code stay in V8's write buffer until the process exits: a worker
// killed then loses them (its code log has them, flushed line by line).

const lib = require('./lib.js');

function square(value) {
  return value * value;
}

function weigh(value, round) {
  let total = 0;
  for (let step = 0; step < 4; step++) total += square(value + step) % 97;
  return total + lib.mix(value + round);
}

function combine(value, round) {
  const left = weigh(value, round);
  const right = lib.scale(weigh(value + 1, round), 31);
  return (left ^ right) & 0xffff;
}

function kernel(count, round) {
  let checksum = 0;
  for (let index = 0; index < count; index++) {
    checksum = (checksum + combine(index, round)) | 0;
  }
  return checksum;
}

const millis = Number(process.argv[2] || 2500);
const deadline = Date.now() + millis;
let result = 0;
let round = 0;
while (Date.now() < deadline) {
  result = (result + kernel(20000, round)) | 0;
  round++;
}
console.log(`rounds=${round} result=${result}`);
