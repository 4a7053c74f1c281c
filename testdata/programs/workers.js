'use strict';
// A worker_threads program for v8inline's worker recordings
// (testdata/workers/record.sh): the main thread and two workers each run
// deep.js, whose hot chain kernel -> combine -> weigh -> square TurboFan
// inlines into one code object, in an isolate of their own.
//
//   node workers.js MILLIS
//
// Each isolate logs its own code (isolate-0x<address>-<pid>-<logfile> with
// V8's default --logfile-per-isolate); the process writes one jitdump.

const { Worker } = require('worker_threads');

const millis = process.argv[2] || '1500';
const script = require.resolve('./deep.js');
// A worker's process.argv is [node, script, ...argv]: deep.js reads MILLIS
// from process.argv[2] there as on the main thread.
const workers = [1, 2].map(() => new Worker(script, { argv: [millis] }));
for (const worker of workers) {
  worker.on('error', (error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
require('./deep.js');
