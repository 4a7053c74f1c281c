// The suite of testdata/inlining-history (make.sh): one hot function called
// in a loop. make.sh writes each "commit" from this file; from commit 9 on,
// scale's rarely taken branch grows past TurboFan's inlining budget
// (--max-inlined-bytecode-size, 460 bytes of bytecode), so V8 stops
// inlining it into sumScaled.
import { Bench } from 'tinybench';

const values = Array.from({ length: 4096 }, (_, index) => (index * 2654435761) % 1000);

function scale(value, factor) {
  if (value < 0) {
    // RARE BRANCH
    throw new RangeError(`negative value ${value}`);
  }
  return (value * factor + 7) % 1013;
}

function sumScaled(input) {
  let total = 0;
  for (let index = 0; index < input.length; index++) total = (total + scale(input[index], 3)) | 0;
  return total;
}

function sumPlain(input) {
  let total = 0;
  for (let index = 0; index < input.length; index++) total = (total + ((input[index] * 5) % 1013)) | 0;
  return total;
}

const bench = new Bench({ time: 1000, warmupTime: 200 });
bench.add('sum scaled', () => sumScaled(values));
bench.add('sum plain', () => sumPlain(values));
await bench.run();
console.table(bench.table());
