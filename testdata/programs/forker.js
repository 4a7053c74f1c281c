'use strict';
// A parent that forks deep.js to do the work, waits, and kills it, as a
// job runner does: `node forker.js MILLIS` kills the child after MILLIS ms.
// The parent runs little JavaScript, never optimized (tests/record.rs).

const { fork } = require('child_process');
const path = require('path');

const millis = Number(process.argv[2] || 1500);
const child = fork(path.join(__dirname, 'deep.js'), [String(millis * 10)], { stdio: 'inherit' });
setTimeout(() => child.kill('SIGTERM'), millis);
