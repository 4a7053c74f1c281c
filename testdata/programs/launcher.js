'use strict';
// A launcher, as tsx's `node_modules/.bin/tsx` or a CLI's bin script is:
// it starts another node on the script it is given, with its arguments,
// and exits with its status: `node launcher.js deep.js 1500`.
// It runs little JavaScript, never optimized (tests/record.rs).

const { spawnSync } = require('child_process');

const result = spawnSync(process.execPath, process.argv.slice(2), { stdio: 'inherit' });
process.exit(result.status ?? 1);
