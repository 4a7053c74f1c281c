'use strict';
// v8inline record: a node that a launcher started by a path of its own
// (`npm exec -- node` and `npx node@VERSION` put their node's directory
// first on PATH), not through the `node` script first on PATH, runs again
// with the flags the expansion needs; this one waits and passes the exit
// on. NODE_OPTIONS carries this file: node refuses --log-code there.
// Deno reads NODE_OPTIONS too; DENO_V8_FLAGS gives it the flags.
if (typeof Deno !== 'undefined') return;
// As they are: a node with the flags (through the script on PATH, or this
// file's re-run), a worker thread (its process's flags are its flags), a
// child of `fork` (its IPC channel cannot be handed on).
if (
  !require('worker_threads').isMainThread ||
  process.execArgv.includes('--log-code') ||
  process.env.NODE_CHANNEL_FD !== undefined
) return;
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
// The flags wanted, as [V8 flag name, argument]; those already known to
// suit a node binary, by its path.
const WANTED = @WANTED@;
const KNOWN = @KNOWN@;
// Written down for v8inline: each node run again (`RUNNER RERUN` pids),
// its command line (`PID COMMAND`), the nodes asked for their flags (`PID`,
// not nodes that went unreached), the flags found (`[path, flags]` JSON).
const STARTED_FILE = @STARTED_FILE@;
const RERUN_FILE = @RERUN_FILE@;
const ASKED_FILE = @ASKED_FILE@;
const FOUND_FILE = @FOUND_FILE@;

// The wanted flags this node's V8 lists in --v8-options (as
// `known_v8_flags` in src/commands/record/runtime.rs reads them).
function flagsForThisNode() {
  if (Object.prototype.hasOwnProperty.call(KNOWN, process.execPath)) return KNOWN[process.execPath];
  try {
    for (const line of fs.readFileSync(FOUND_FILE, 'utf8').split('\n')) {
      if (!line) continue;
      const [binary, flags] = JSON.parse(line);
      if (binary === process.execPath) return flags;
    }
  } catch (_) {}
  const env = Object.assign({}, process.env);
  delete env.NODE_OPTIONS;
  const listed = spawnSync(process.execPath, ['--v8-options'], { env, encoding: 'utf8' });
  if (listed.pid) append(ASKED_FILE, `${listed.pid}\n`);
  if (listed.error || listed.status !== 0) return [];
  const names = new Set();
  for (const line of listed.stdout.split('\n')) {
    const match = /^\s*--([^ (]+)/.exec(line);
    if (match) names.add(match[1].replace(/_/g, '-'));
  }
  const flags = WANTED.filter(([name]) => names.has(name)).map(([, argument]) => argument);
  append(FOUND_FILE, `${JSON.stringify([process.execPath, flags])}\n`);
  return flags;
}

function append(file, text) {
  try {
    fs.appendFileSync(file, text);
  } catch (_) {}
}

const flags = flagsForThisNode();
if (flags.includes('--log-code')) {
  const given = [...process.execArgv, ...process.argv.slice(1)];
  const run = spawnSync(process.execPath, [...flags, ...given], { stdio: 'inherit', argv0: process.argv0 });
  if (!run.error) {
    append(STARTED_FILE, `${run.pid} ${[process.execPath, ...given].join(' ')}\n`);
    append(RERUN_FILE, `${process.pid} ${run.pid}\n`);
    if (run.signal) {
      process.kill(process.pid, run.signal);
      process.exit(128 + (os.constants.signals[run.signal] || 0));
    }
    process.exit(run.status === null ? 1 : run.status);
  }
}
