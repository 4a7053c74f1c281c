// tinybench times the two kinds of work; `record` finds its tasks. The
// second keeps its samples (tinybench 5 and 6 drop them unless asked), so
// that `record` keeps each iteration's time.
import { Bench } from 'tinybench';
import work from './work.cjs';

const bench = new Bench({ time: 400, warmupTime: 100 });
bench.add('sum of squares', () => work.sumOfSquares());
bench.add('join words', () => work.joinWords(), { retainSamples: true });
await bench.run();
for (const task of bench.tasks) console.log(task.name);
