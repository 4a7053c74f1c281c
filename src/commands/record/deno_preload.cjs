
// ---------------------------------------------------------------------------
// Deno: the benchmarks' windows of every deno the command starts. Deno reads
// NODE_OPTIONS' `--require` too, in `deno run`, `deno bench`, `deno test`
// and the denos of `deno task`, before the main module (this file follows
// preload.cjs in the same script, whose main() returns at once in Deno:
// the flags come in `--v8-flags` or DENO_V8_FLAGS). Here:
//
// - Permissions: the environment variables, the recording's directory and
//   the thread's id are read only where Deno already grants it (asked with
//   Deno.permissions.querySync, which never prompts); `record` grants the
//   first two to the deno it starts (runtime.rs, `deno_grants`). Without
//   them this does nothing.
// - The clock: Deno's process.hrtime.bigint() and performance.now() count
//   from the process's start (performance.now() reads Rust's Instant,
//   CLOCK_MONOTONIC, from an origin JavaScript cannot see). timeOrigin +
//   now() is that reading on CLOCK_REALTIME (Deno's op_time_origin: the
//   wall clock minus the time since the origin); `record` measured
//   CLOCK_REALTIME - CLOCK_MONOTONIC when it started (config.json), which
//   moves it to perf's clock.
// - The thread: /proc/thread-self, which Deno lets only `--allow-all` (-A)
//   read; else the process's main thread, where `deno run` runs the main
//   module. `deno bench` runs each file on a thread of its own: without -A
//   its windows say `"tid": null` (record then finds the thread: deno.rs).
// - Deno.bench (`deno bench`): Deno runs each bench in its own function,
//   which swaps globalThis.console for the bench's and back around the
//   bench's warm-up and measured loop: that is the window. The user's bench
//   function is wrapped to tell which bench runs (one comparison per
//   iteration). Deno hands its timing to its Rust reporter only: no time
//   per iteration.
// - tinybench, mitata (module.registerHooks, which Deno 2.9 has) and
//   performance.measure: preload.cjs's observers, on this clock and thread.

function denoMayRead(descriptor) {
  try {
    return Deno.permissions.querySync(descriptor).state === 'granted';
  } catch (_) {
    return false;
  }
}

function denoVariable(name) {
  return denoMayRead({ name: 'env', variable: name }) ? Deno.env.get(name) : undefined;
}

// Whether every permission is granted (-A): only then may /proc/thread-self
// be read.
function denoAllowsAll() {
  return ['read', 'write', 'net', 'env', 'run', 'ffi', 'sys', 'import'].every((name) => denoMayRead({ name }));
}

function denoThreadId() {
  if (denoAllowsAll()) {
    try {
      // `PID/task/TID`
      const tid = Number(fs.readlinkSync('/proc/thread-self').split('/')[2]);
      if (tid > 0) return tid;
    } catch (_) {}
  }
  // A worker's or a bench file's thread is not the main thread.
  const onMainThread = typeof WorkerGlobalScope === 'undefined' && !denoBenchRuns;
  return onMainThread ? Deno.pid : null;
}

// Set once the first Deno.bench runs: `deno bench` runs its files off the
// main thread.
let denoBenchRuns = false;

function denoMain() {
  const record = denoVariable('V8INLINE_RECORD');
  if (!record || denoVariable('V8INLINE_BENCHMARKS') === '0') return;
  const windows = `${record}/windows`;
  if (!denoMayRead({ name: 'read', path: `${record}/config.json` }) || !denoMayRead({ name: 'write', path: windows })) {
    return;
  }
  const configuration = JSON.parse(fs.readFileSync(`${record}/config.json`, 'utf8'));
  if (typeof configuration.realtime_minus_monotonic_ns !== 'string') return;
  const originNs =
    BigInt(Math.round(performance.timeOrigin * 1e6)) - BigInt(configuration.realtime_minus_monotonic_ns);
  WINDOWS_FILE = windows;
  monotonicNow = () => originNs + BigInt(Math.round(performance.now() * 1e6));
  let threadIdOfDeno;
  osThreadId = () => {
    if (threadIdOfDeno === undefined || (threadIdOfDeno === Deno.pid && denoBenchRuns)) threadIdOfDeno = denoThreadId();
    return threadIdOfDeno;
  };
  for (const observe of [observeTinybench, observeMeasures, observeMitata, observeDenoBench]) {
    try {
      observe();
    } catch (_) {}
  }
}

// Deno.bench(name, fn), (name, options, fn), (fn), (options, fn),
// (options with fn): the same call with the user's function wrapped.
function observeDenoBench() {
  const register = Deno.bench;
  if (typeof register !== 'function') return;
  const base = globalThis.console;
  let current = globalThis.console;
  // The bench that runs, its start, set by the console swap and the
  // wrapped function.
  let running = null;
  let started;
  Object.defineProperty(globalThis, 'console', {
    configurable: true,
    enumerable: false,
    get() {
      return current;
    },
    set(value) {
      try {
        if (value !== base && current === base) {
          running = null;
          started = monotonicNow();
        } else if (value === base && current !== base && running !== null) {
          const name = running;
          const end = monotonicNow();
          running = null;
          // After the bench's own permissions (`permissions` of
          // Deno.bench) are given back.
          queueMicrotask(() => writeWindow('Deno.bench', name, started, end, null));
        }
      } catch (_) {}
      current = value;
    },
  });
  const AsyncFunction = (async () => {}).constructor;
  const wrap = (fn, name) => {
    if (typeof fn !== 'function') return fn;
    const benchFunction = function benchFunction(context) {
      if (running !== name) {
        running = name;
        denoBenchRuns = true;
      }
      return fn.call(this, context);
    };
    // Deno awaits a bench whose function is an AsyncFunction; its name
    // names a bench given without one.
    if (fn.constructor === AsyncFunction) Object.setPrototypeOf(benchFunction, AsyncFunction.prototype);
    Object.defineProperty(benchFunction, 'name', { value: fn.name });
    return benchFunction;
  };
  Deno.bench = function bench(nameOrOptions, optionsOrFn, fn) {
    const given = Array.from(arguments);
    try {
      if (typeof nameOrOptions === 'string') {
        const at = typeof optionsOrFn === 'function' ? 1 : 2;
        given[at] = wrap(given[at], nameOrOptions);
      } else if (typeof nameOrOptions === 'function') {
        given[0] = wrap(nameOrOptions, nameOrOptions.name);
      } else if (nameOrOptions && typeof optionsOrFn === 'function') {
        given[1] = wrap(optionsOrFn, nameOrOptions.name ?? optionsOrFn.name);
      } else if (nameOrOptions && typeof nameOrOptions.fn === 'function') {
        given[0] = Object.assign({}, nameOrOptions, {
          fn: wrap(nameOrOptions.fn, nameOrOptions.name ?? nameOrOptions.fn.name),
        });
      }
    } catch (_) {
      return register.apply(this, arguments);
    }
    return register.apply(this, given);
  };
}

try {
  if (typeof Deno !== 'undefined') denoMain();
} catch (_) {
  // The deno runs as it would have without v8inline.
}
