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
// The benchmarks' windows, one JSON line each (`record`'s benchmarks.rs
// reads them).
let WINDOWS_FILE;

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
  WINDOWS_FILE = `${RECORD}/windows`;
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
  // Deno: deno_preload.cjs, which follows this file in the preload.
  if (typeof Deno !== 'undefined') return;
  if (!readConfiguration()) return;
  // A worker thread of a node this ran in already (workers copy the
  // environment): its process's flags are its flags.
  if (process.env.V8INLINE_PRELOADED === String(process.pid)) {
    if (process.execArgv.includes('--log-code')) observeBenchmarks();
    return;
  }
  process.env.V8INLINE_PRELOADED = String(process.pid);
  if (process.execArgv.includes('--log-code')) {
    observeBenchmarks();
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

// ---------------------------------------------------------------------------
// Benchmarks: the time windows of the measured iterations of each benchmark
// the program runs, found without a change to its code, so that `record`
// splits the samples by them (src/commands/record/benchmarks.rs reads what
// this writes). One JSON line per window, written when the window ends (a
// process.exit or kill loses at most the window that is open):
// {"harness", "name", "pid", "tid", "start_ns", "end_ns", "time_per_iteration",
// "timings"}
// with times on CLOCK_MONOTONIC, the clock of `perf record -k mono`
// (process.hrtime.bigint() reads it: libuv's uv_hrtime).
//
// - tinybench 2 to 6 (vitest bench runs it): its Task is an EventTarget
//   that dispatches `start` before its measured loop and `cycle` (or
//   `error`, `abort`) after it; `warmup` before the warm-up, which is left
//   out. Wrapping EventTarget.prototype.dispatchEvent sees both, in
//   CommonJS and ES modules alike.
// - benchmark.js 2: Benchmark.prototype.emit, from the module when it is
//   loaded (Module._load); `start` to `complete` of the benchmark (its
//   clones, which run the cycles, are inside).
// - mitata 1: its benchmark class's run(), through a module load hook
//   (node 22.15 / 23.5 and later).
// - performance.measure(name, ...): each measure is a window.
// Each hook costs a comparison on the events it sees and never throws.

// This thread's id as perf names it: a worker's OS thread, not its
// threadId.
let threadId;
function osThreadId() {
  if (threadId === undefined) {
    threadId = process.pid;
    try {
      // `PID/task/TID`
      const tid = Number(fs.readlinkSync('/proc/thread-self').split('/')[2]);
      if (tid > 0) threadId = tid;
    } catch (_) {}
  }
  return threadId;
}

function monotonicNow() {
  return process.hrtime.bigint();
}

// Times per iteration as the harness measured them, in ms: to ns.
function timesInNanoseconds(stats) {
  const ns = (ms) => (typeof ms === 'number' && Number.isFinite(ms) ? ms * 1e6 : null);
  if (!stats || ns(stats.mean) === null) return null;
  return {
    mean: ns(stats.mean),
    stddev: ns(stats.sd),
    median: ns(stats.median),
    min: ns(stats.min),
    max: ns(stats.max),
    p75: ns(stats.p75),
    p99: ns(stats.p99),
    samples: typeof stats.count === 'number' ? stats.count : null,
  };
}

// At most this many timings are kept as they were taken; of more, this
// many quantiles (src/model/benchmarks.rs: HarnessTimings).
const TIMINGS_KEPT = 1000;
const QUANTILES_KEPT = 101;

// Each timing the harness took (`of`: `iteration`, or the mean of a mitata
// `batch` or a benchmark.js `cycle`), `values` in `toNs` units, whole ns: in
// the order taken, or quantiles where there are more than TIMINGS_KEPT.
function timings(of, values, toNs) {
  if (!Array.isArray(values) || values.length === 0) return null;
  const ns = [];
  for (const value of values) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return null;
    ns.push(Math.round(value * toNs));
  }
  if (ns.length <= TIMINGS_KEPT) return { of, count: ns.length, ns };
  ns.sort((a, b) => a - b);
  const quantiles = [];
  for (let index = 0; index < QUANTILES_KEPT; index++) {
    quantiles.push(ns[Math.round((index * (ns.length - 1)) / (QUANTILES_KEPT - 1))]);
  }
  return { of, count: ns.length, quantiles_ns: quantiles };
}

function writeWindow(harness, name, startNs, endNs, timePerIteration, timingsTaken) {
  const window = {
    harness,
    name: String(name),
    pid: process.pid,
    tid: osThreadId(),
    start_ns: '@start',
    end_ns: '@end',
    time_per_iteration: timePerIteration,
    timings: timingsTaken || null,
  };
  // BigInt is not JSON: its digits go in as they are.
  const line = JSON.stringify(window).replace('"@start"', String(startNs)).replace('"@end"', String(endNs));
  append(WINDOWS_FILE, `${line}\n`);
}

// The median of an array sorted ascending, or of a copy sorted.
function median(samples) {
  if (!Array.isArray(samples) || samples.length === 0) return undefined;
  const sorted = samples.slice().sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

// tinybench's task statistics: `result.latency` (3 to 6), `result` (2),
// in ms.
function tinybenchTimes(task) {
  const result = task.result;
  if (!result) return null;
  const latency = result.latency || result;
  const samples = Array.isArray(latency.samples) ? latency.samples : undefined;
  const count = typeof latency.samplesCount === 'number' ? latency.samplesCount : samples && samples.length;
  return timesInNanoseconds({
    mean: latency.mean,
    sd: latency.sd,
    median: typeof latency.p50 === 'number' ? latency.p50 : median(samples),
    min: latency.min,
    max: latency.max,
    p75: latency.p75,
    p99: latency.p99,
    count,
  });
}

// tinybench's timings of each iteration, in ms: kept by tinybench 2 to 4,
// and by 5 and 6 where the bench or task has `retainSamples: true`.
function tinybenchTimings(task) {
  const result = task.result;
  const latency = result && (result.latency || result);
  return latency ? timings('iteration', latency.samples, 1e6) : null;
}

function observeTinybench() {
  const dispatch = EventTarget.prototype.dispatchEvent;
  const started = new WeakMap();
  EventTarget.prototype.dispatchEvent = function dispatchEvent(event) {
    try {
      // Only a task's own events: its bench dispatches the same ones.
      if (event && event.task === this && typeof this.name === 'string') {
        const type = event.type;
        if (type === 'start') started.set(this, monotonicNow());
        else if ((type === 'cycle' || type === 'error' || type === 'abort') && started.has(this)) {
          const start = started.get(this);
          started.delete(this);
          const cycled = type === 'cycle';
          writeWindow(
            'tinybench',
            this.name,
            start,
            monotonicNow(),
            cycled ? tinybenchTimes(this) : null,
            cycled ? tinybenchTimings(this) : null,
          );
        }
      }
    } catch (_) {}
    return dispatch.apply(this, arguments);
  };
}

// benchmark.js's statistics: seconds per iteration, one per cycle.
function benchmarkJsTimes(bench) {
  const stats = bench.stats;
  if (!stats || !Array.isArray(stats.sample) || stats.sample.length === 0) return null;
  const ms = (seconds) => seconds * 1e3;
  const sample = stats.sample;
  return timesInNanoseconds({
    mean: ms(stats.mean),
    sd: ms(stats.deviation),
    median: ms(median(sample)),
    min: ms(Math.min(...sample)),
    max: ms(Math.max(...sample)),
    count: sample.length,
  });
}

function observeBenchmarkJs(Benchmark) {
  const proto = Benchmark && Benchmark.prototype;
  if (!proto || typeof proto.emit !== 'function' || proto.emit.v8inline) return;
  const emit = proto.emit;
  const started = new WeakMap();
  proto.emit = function emitObserved(type) {
    try {
      const name = typeof type === 'string' ? type : type && type.type;
      // The benchmark itself, not the clones compute() runs its cycles in.
      if (this instanceof Benchmark && !this._original) {
        if (name === 'start') started.set(this, monotonicNow());
        else if ((name === 'complete' || name === 'abort' || name === 'error') && started.has(this)) {
          const start = started.get(this);
          started.delete(this);
          const label = this.name === undefined ? this.id : this.name;
          const complete = name === 'complete';
          writeWindow(
            'benchmark.js',
            label,
            start,
            monotonicNow(),
            complete ? benchmarkJsTimes(this) : null,
            complete && this.stats ? timings('cycle', this.stats.sample, 1e9) : null,
          );
        }
      }
    } catch (_) {}
    return emit.apply(this, arguments);
  };
  proto.emit.v8inline = true;
}

function observeModuleLoads() {
  const Module = require('module');
  const load = Module._load;
  let found = false;
  Module._load = function loadObserved(request) {
    const exported = load.apply(this, arguments);
    if (!found && typeof request === 'string' && /(^|\/)benchmark(\.js)?$/.test(request)) {
      try {
        if (typeof exported === 'function' && exported.Suite && exported.Deferred) {
          found = true;
          observeBenchmarkJs(exported);
        }
      } catch (_) {}
    }
    return exported;
  };
}

function observeMeasures() {
  const performance = globalThis.performance;
  if (!performance || typeof performance.measure !== 'function') return;
  const measure = performance.measure;
  // performance.now() + offset = CLOCK_MONOTONIC ns, found once: the
  // smallest gap between two readings bounds its error.
  let offsetNs;
  const calibrate = () => {
    let best;
    for (let i = 0; i < 5; i++) {
      const before = process.hrtime.bigint();
      const now = performance.now();
      const after = process.hrtime.bigint();
      if (best === undefined || after - before < best.gap) {
        best = { gap: after - before, offset: before + (after - before) / 2n - BigInt(Math.round(now * 1e6)) };
      }
    }
    return best.offset;
  };
  // Node 18 defines Performance.prototype.measure read-only: an own
  // property of the instance, defined rather than assigned.
  const measureObserved = function measureObserved(name) {
    const entry = measure.apply(this, arguments);
    try {
      if (entry && typeof entry.startTime === 'number' && typeof entry.duration === 'number') {
        if (offsetNs === undefined) offsetNs = calibrate();
        const start = BigInt(Math.round(entry.startTime * 1e6)) + offsetNs;
        const end = BigInt(Math.round((entry.startTime + entry.duration) * 1e6)) + offsetNs;
        writeWindow('performance.measure', entry.name, start, end, null);
      }
    } catch (_) {}
    return entry;
  };
  Object.defineProperty(performance, 'measure', { value: measureObserved, writable: true, configurable: true });
}

// mitata's statistics: ns per iteration, one sample per batch.
function mitataTimes(stats) {
  if (!stats || typeof stats.avg !== 'number') return null;
  const samples = Array.isArray(stats.samples) ? stats.samples : [];
  let stddev = null;
  if (samples.length > 1) {
    let squares = 0;
    for (const sample of samples) squares += (sample - stats.avg) ** 2;
    stddev = Math.sqrt(squares / (samples.length - 1));
  }
  const ms = (ns) => (typeof ns === 'number' ? ns / 1e6 : undefined);
  return timesInNanoseconds({
    mean: ms(stats.avg),
    sd: ms(stddev === null ? undefined : stddev),
    median: ms(stats.p50),
    min: ms(stats.min),
    max: ms(stats.max),
    p75: ms(stats.p75),
    p99: ms(stats.p99),
    count: samples.length || null,
  });
}

// mitata 1's benchmark class B (src/main.mjs): each run() is one window
// (its warm-up is inside measure(), not told apart), named by the
// benchmark; with args, each run's name differs and no timing is kept.
function observeMitataBench(B) {
  const proto = B && B.prototype;
  if (!proto || typeof proto.run !== 'function' || proto.run.v8inline) return;
  const run = proto.run;
  proto.run = async function runObserved() {
    const start = monotonicNow();
    const trial = await run.apply(this, arguments);
    try {
      const runs = trial && Array.isArray(trial.runs) ? trial.runs : [];
      const stats = runs.length === 1 ? runs[0].stats : null;
      writeWindow('mitata', this._name, start, monotonicNow(), mitataTimes(stats), stats && timings('batch', stats.samples, 1));
    } catch (_) {}
    return trial;
  };
  proto.run.v8inline = true;
}

// mitata is ES modules only, its class not reachable from outside: a
// synchronous load hook (module.registerHooks, node 22.15 and 23.5 on)
// hands the class to observeMitataBench from the end of its own module.
// Each module load costs one string comparison more. Older nodes: not
// observed.
function observeMitata() {
  const Module = require('module');
  if (typeof Module.registerHooks !== 'function') return;
  const key = Symbol.for('v8inline.mitata');
  Object.defineProperty(globalThis, key, { value: observeMitataBench });
  Module.registerHooks({
    load(url, context, nextLoad) {
      const result = nextLoad(url, context);
      try {
        if (typeof url === 'string' && url.endsWith('/mitata/src/main.mjs') && result && result.source != null) {
          const source = typeof result.source === 'string' ? result.source : Buffer.from(result.source).toString();
          result.source = `${source}\n;globalThis[Symbol.for('v8inline.mitata')](B);\n`;
        }
      } catch (_) {}
      return result;
    },
  });
}

function observeBenchmarks() {
  // The user's way out (and bench/benchmark-split.sh's baseline).
  if (process.env.V8INLINE_BENCHMARKS === '0') return;
  for (const observe of [observeTinybench, observeModuleLoads, observeMeasures, observeMitata]) {
    try {
      observe();
    } catch (_) {}
  }
}

try {
  main();
} catch (_) {
  // The node runs as it would have without v8inline.
}
