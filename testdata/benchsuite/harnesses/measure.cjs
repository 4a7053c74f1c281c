// Windows named by performance.measure: 15 rounds of each kind of work,
// one measured by marks, the other by a start time.
'use strict';
const { sumOfSquares, joinWords } = require('./work.cjs');

for (let round = 0; round < 15; round++) {
  performance.mark('squares');
  for (let i = 0; i < 20; i++) sumOfSquares();
  performance.measure('sum of squares', 'squares');
  const start = performance.now();
  for (let i = 0; i < 20; i++) joinWords();
  performance.measure('join words', { start, end: performance.now() });
}
