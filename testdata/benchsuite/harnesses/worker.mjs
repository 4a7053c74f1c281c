// tinybench on two threads at once: the main thread times one kind of
// work while a worker thread times the other; each benchmark's windows
// belong to its own thread.
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { Bench } from 'tinybench';
import work from './work.cjs';

const bench = new Bench({ time: 600, warmupTime: 50 });
if (isMainThread) {
  const worker = new Worker(new URL(import.meta.url));
  const exited = new Promise((resolve) => worker.on('exit', resolve));
  await new Promise((resolve) => worker.once('message', resolve));
  bench.add('join words', () => work.joinWords());
  await bench.run();
  await exited;
} else {
  bench.add('sum of squares', () => work.sumOfSquares());
  parentPort.postMessage('started');
  await bench.run();
}
