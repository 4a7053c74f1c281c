'use strict';
// The program behind v8inline's real test recordings (testdata/record.sh).
//
// - A deep inlining chain: kernel -> combine -> weigh -> square, which
//   TurboFan and Maglev compile into one code object.
// - Calls into lib.js (mix, scale): inlining across two scripts.
// - A phase that changes object shapes, so readWeight and sumWeights
//   deoptimize and reoptimize: freed code addresses get reused.
//
// lib.js keeps its functions on lines 1-13 and this file starts its own
// functions after line 15, so a line number alone tells which function it
// is in: the share test maps V8's positionTicks lines to functions that way.

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

// Shapes change per phase: reading .weight deoptimizes the optimized
// code, which V8 frees and later recompiles, often at a reused address.
function readWeight(item) {
  return item.weight * 2 + 1;
}

function sumWeights(items) {
  let sum = 0;
  for (let index = 0; index < items.length; index++) sum += readWeight(items[index]);
  return sum;
}

function makeItems(phase, count) {
  const items = [];
  for (let index = 0; index < count; index++) {
    const item = {};
    for (let field = 0; field < phase; field++) item['pad' + field] = field;
    item.weight = index;
    items.push(item);
  }
  return items;
}

const millis = Number(process.argv[2] || 1500);
const deadline = Date.now() + millis;
let result = 0;
let round = 0;
while (Date.now() < deadline) {
  result = (result + kernel(20000, round)) | 0;
  if (round % 40 === 0) {
    const phase = (round / 40) % 6;
    result = (result + sumWeights(makeItems(phase, 2000))) | 0;
    if (typeof gc === 'function') gc();
  }
  round++;
}
console.log(`rounds=${round} result=${result}`);
