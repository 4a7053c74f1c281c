// deno run -A workers.mjs MILLIS: the main thread and two Web Workers each
// run ../deep.js (hot chain kernel -> combine -> weigh -> square), each in
// an isolate of its own. An ES module, as Deno's workers are; deep.js is
// CommonJS, required through node:module.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const millis = Deno.args[0] ?? '1500';
const workers = [1, 2].map(() => new Worker(new URL('./deep_worker.mjs', import.meta.url), { type: 'module' }));
for (const worker of workers) worker.postMessage(millis);
require('./deep.js');
