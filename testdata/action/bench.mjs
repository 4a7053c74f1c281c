import { Bench } from 'tinybench';

const ROUNDS = 1;
const text = 'the quick brown fox jumps over the lazy dog '.repeat(40);

function checksum(input) {
  let hash = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < input.length; i++) hash = (hash * 31 + input.charCodeAt(i)) | 0;
  }
  return hash;
}

function countWords(input) {
  let words = 0;
  for (let i = 0; i < input.length; i++) if (input.charCodeAt(i) === 32) words = (words + i) | 0;
  return words;
}

function countVowels(input) {
  let vowels = 0;
  for (let i = 0; i < input.length; i++) {
    const code = input.charCodeAt(i);
    if (code === 97 || code === 101 || code === 105 || code === 111 || code === 117) vowels++;
  }
  return vowels;
}

const bench = new Bench({ time: 1000, warmupTime: 200 });
bench.add('checksum and words', () => checksum(text) + countWords(text));
bench.add('checksum alone', () => checksum(text));
bench.add('count vowels', () => countVowels(text));
await bench.run();
console.table(bench.table());
