'use strict';
// v8inline record's preload, first in NODE_OPTIONS, in every node the
// command starts. It writes down what each node runs, and a node started
// without the flags the expansion needs, by a path of its own rather than
// through the `node` script first on PATH (`npm exec -- node` and
// `npx node@VERSION` put their node's directory first on PATH), runs again
// with them: this one waits and passes the exit on. (node refuses
// --log-code in NODE_OPTIONS.) Deno reads NODE_OPTIONS too; DENO_V8_FLAGS
// gives it the flags.
//
// It runs in every node's startup, so it loads no module it does not need:
// with --log-code, loading worker_threads alone takes 15 ms. Whatever goes
// wrong in it, the node goes on as it would have without it.
//
// The same file serves every recording (it stays after record returns, as
// NODE_OPTIONS names it): what to do is in the recording's own directory,
// named by V8INLINE_RECORD. A node started after record is done (a
// background job of the command) finds no directory and runs as it would
// without v8inline.
const fs = require('fs');

const RECORD = process.env.V8INLINE_RECORD;
// The flags wanted, as [V8 flag name, argument]; those already known to
// suit a node binary, by its path (from `config.json`).
let WANTED;
let KNOWN;
// Written down for v8inline: each node's command line (`PID COMMAND`; a
// re-run's runner writes the re-run's after it exits, the line that
// counts), each node run again (`RUNNER RERUN` pids), the nodes asked for
// their flags (`PID`: no program ran there), the flags found (`[path,
// flags]` JSON).
let STARTED_FILE;
let RERUN_FILE;
let ASKED_FILE;
let FOUND_FILE;

// The recording's configuration, or false when there is no recording.
function readConfiguration() {
  if (!RECORD) return false;
  let configuration;
  try {
    configuration = JSON.parse(fs.readFileSync(`${RECORD}/config.json`, 'utf8'));
  } catch (_) {
    return false;
  }
  WANTED = configuration.wanted;
  KNOWN = configuration.known;
  STARTED_FILE = `${RECORD}/started`;
  RERUN_FILE = `${RECORD}/rerun`;
  ASKED_FILE = `${RECORD}/asked`;
  FOUND_FILE = `${RECORD}/found`;
  return true;
}

function append(file, text) {
  try {
    fs.appendFileSync(file, text);
  } catch (_) {}
}

// This node's arguments, the script as given when it is in the working
// directory, without the flags v8inline added.
function commandLine(program) {
  const ours = new Set(WANTED.map(([, argument]) => argument));
  const script = process.argv[1];
  const here = `${process.cwd()}/`;
  const argv = process.argv.slice(1);
  if (script && script.startsWith(here)) argv[0] = script.slice(here.length);
  return [program, ...process.execArgv.filter((argument) => !ours.has(argument)), ...argv].join(' ');
}

function main() {
  if (typeof Deno !== 'undefined') return;
  if (!readConfiguration()) return;
  // A worker thread of a node this ran in already (workers copy the
  // environment): its process's flags are its flags.
  if (process.env.V8INLINE_PRELOADED === String(process.pid)) return;
  process.env.V8INLINE_PRELOADED = String(process.pid);
  if (process.execArgv.includes('--log-code')) {
    endWithTheRunner();
    append(STARTED_FILE, `${process.pid} ${commandLine('node')}\n`);
    giveForksTheFlags(process.execArgv.filter((argument) => WANTED.some(([, wanted]) => wanted === argument)));
    return;
  }
  // As it is: a worker thread whose environment was not copied (the check
  // above misses it), a child of `fork` whose IPC channel (set up already,
  // its variables gone from the environment) cannot be handed on.
  if (!require('worker_threads').isMainThread || process.channel) return;
  runAgainWithTheFlags();
}

// A re-run ends when the node that ran it is killed (a signal cannot reach
// it while it waits in spawnSync): it would go on unrecorded.
function endWithTheRunner() {
  const runner = process.env.V8INLINE_RUNNER;
  if (runner === undefined) return;
  delete process.env.V8INLINE_RUNNER;
  const runnerGone = () => process.ppid !== Number(runner);
  if (runnerGone()) process.kill(process.pid, 'SIGTERM');
  setInterval(() => {
    if (runnerGone()) process.kill(process.pid, 'SIGTERM');
  }, 200).unref();
}

// `fork` passes a node's flags on to its children, unless its caller gives
// an `execArgv` of its own (test runners' workers often do): the flags go
// in front of that. A forked node with an IPC channel cannot run again.
function giveForksTheFlags(flags) {
  const childProcess = require('child_process');
  const fork = childProcess.fork;
  childProcess.fork = function forkWithTheFlags(modulePath, args, options) {
    // fork(modulePath[, args][, options])
    const optionsAt = args === undefined || args === null || Array.isArray(args) ? 2 : 1;
    const given = Array.from(arguments);
    const forkOptions = given[optionsAt];
    if (
      forkOptions &&
      Array.isArray(forkOptions.execArgv) &&
      !forkOptions.execArgv.includes('--log-code') &&
      (forkOptions.execPath === undefined || forkOptions.execPath === process.execPath)
    ) {
      given[optionsAt] = Object.assign({}, forkOptions, { execArgv: [...flags, ...forkOptions.execArgv] });
    }
    return fork.apply(this, given);
  };
  // `import { fork } from 'node:child_process'` too.
  require('module').syncBuiltinESMExports();
}

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
  const { spawnSync } = require('child_process');
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

// Runs this node again with the flags, the same arguments and stdio, and
// exits as the re-run did; returns only if it could not run (this node
// then goes on without the flags, and record names it).
function runAgainWithTheFlags() {
  const flags = flagsForThisNode();
  if (!flags.includes('--log-code')) return;
  const given = [...process.execArgv, ...process.argv.slice(1)];
  const env = Object.assign({}, process.env, { V8INLINE_RUNNER: String(process.pid) });
  const { spawnSync } = require('child_process');
  const run = spawnSync(process.execPath, [...flags, ...given], { stdio: 'inherit', argv0: process.argv0, env });
  if (run.error) return;
  try {
    append(STARTED_FILE, `${run.pid} ${commandLine(process.execPath)}\n`);
    append(RERUN_FILE, `${process.pid} ${run.pid}\n`);
  } finally {
    if (run.signal) {
      process.kill(process.pid, run.signal);
      process.exit(128 + (require('os').constants.signals[run.signal] || 0));
    }
    process.exit(run.status === null ? 1 : run.status);
  }
}

try {
  main();
} catch (_) {
  // The node runs as it would have without v8inline.
}
