// Finds lone UTF-16 surrogates in strings, over and over, for MILLIS ms
// (default 1000): a regular expression whose source holds `(` (a lookahead
// and a group), which V8 compiles to native RegExp code.
'use strict';
const loneSurrogate =
  /[\x00-\x7F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/g;

function makeText(round) {
  let text = '';
  for (let i = 0; i < 200; i++) {
    text += String.fromCharCode(0x4e00 + ((i * 7 + round) % 500));
    if (i % 37 === 0) text += '\uD83D';
    if (i % 53 === 0) text += '\uDE00';
  }
  return text;
}

function countMatches(text) {
  let count = 0;
  loneSurrogate.lastIndex = 0;
  while (loneSurrogate.exec(text) !== null) count++;
  return count;
}

const millis = Number(process.argv[2] || 1000);
const end = Date.now() + millis;
let total = 0;
let rounds = 0;
while (Date.now() < end) {
  total += countMatches(makeText(rounds));
  rounds++;
}
console.log(`${rounds} rounds, ${total} matches`);
