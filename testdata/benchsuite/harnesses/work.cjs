// Two kinds of work, each a function of its own name, that the harness
// programs here time: each benchmark's profile must hold its own.
'use strict';

function sumOfSquares() {
  let sum = 0;
  for (let i = 0; i < 300000; i++) sum = (sum + ((i * i) % 7)) | 0;
  return sum;
}

function joinWords() {
  const words = [];
  for (let i = 0; i < 20000; i++) words.push(`w${i % 97}`);
  return words.join(' ').length;
}

module.exports = { sumOfSquares, joinWords };
