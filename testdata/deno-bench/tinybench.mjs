// tinybench under `deno run`, from node_modules.
import { Bench } from 'tinybench';
import { joinWords, sumOfSquares } from './work.js';

const bench = new Bench({ time: 400, warmupTime: 100 });
bench.add('sum of squares', () => sumOfSquares());
bench.add('join words', () => joinWords());
await bench.run();
for (const task of bench.tasks) console.log(task.name);
