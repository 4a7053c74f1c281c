// mitata times the two kinds of work; `record` finds its benchmarks (on
// node 22.15 / 23.5 and later, which have module.registerHooks).
import { bench, run } from 'mitata';
import work from './work.cjs';

bench('sum of squares', () => work.sumOfSquares());
bench('join words', () => work.joinWords());
await run();
