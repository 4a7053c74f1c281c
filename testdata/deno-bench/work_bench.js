// Deno's own harness: `deno bench` finds this file (`*_bench.js`); the two
// forms of Deno.bench users write, one bench async.
import { joinWords, sumOfSquares } from './work.js';

Deno.bench('sum of squares', () => {
  sumOfSquares();
});
Deno.bench({
  name: 'join words',
  async fn() {
    joinWords();
  },
});
