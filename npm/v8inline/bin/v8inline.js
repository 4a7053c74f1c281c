#!/usr/bin/env node
// The `v8inline` command of the npm package: runs the prebuilt binary that a
// platform package holds. The platform packages are optionalDependencies of
// `v8inline`, and each declares its os, cpu and libc, so the package manager
// installs only the one this machine can run, with no install script.
// Modelled on biome's launcher (packages/@biomejs/biome/bin/biome) and
// esbuild's (lib/npm/node-platform.ts), which do the same.
"use strict";

const childProcess = require("child_process");
const fs = require("fs");
const os = require("os");

// The platform packages there can be: each has its template in npm/ and its
// Rust target in scripts/npm-pack.sh. Which of them this release has is in
// package.json's optionalDependencies, which that script fills.
const PLATFORM_PACKAGES = {
  "linux-x64-gnu": "@v8inline/linux-x64-gnu",
  "linux-arm64-gnu": "@v8inline/linux-arm64-gnu",
  "linux-x64-musl": "@v8inline/linux-x64-musl",
  "linux-arm64-musl": "@v8inline/linux-arm64-musl",
};
// Where the binary sits inside a platform package.
const BINARY_IN_PACKAGE = "bin/v8inline";
// Names another v8inline binary to run instead (a build from source).
const BINARY_VARIABLE = "V8INLINE_BINARY";

// Signals sent to one process (kill, timeout, process managers): passed on.
const FORWARDED_SIGNALS = ["SIGTERM", "SIGHUP", "SIGUSR2"];
// Signals a terminal sends to its whole foreground process group: the binary
// has received it already, and a second Ctrl-C would tell `v8inline record`
// to stop at once without writing the profile. The launcher only outlives them.
const GROUP_SIGNALS = ["SIGINT", "SIGQUIT"];

function fail(message, exitCode) {
  process.stderr.write(`v8inline: ${message}\n`);
  process.exit(exitCode);
}

// glibc or musl, from the text of ldd as detect-libc reads it: cheap
// (process.report costs about 20 ms), and only needed to pick a package.
function linuxLibc() {
  try {
    const ldd = fs.readFileSync("/usr/bin/ldd", "latin1");
    if (ldd.includes("musl")) return "musl";
  } catch (_) {
    // No ldd (a distroless image): glibc is by far the likelier.
  }
  return "gnu";
}

function platformKey() {
  const key = `${process.platform}-${process.arch}`;
  return process.platform === "linux" ? `${key}-${linuxLibc()}` : key;
}

function describe(key) {
  return key.replace(/-gnu$/, " (glibc)").replace(/-musl$/, " (musl)");
}

const BUILD_FROM_SOURCE =
  "To build it from source with Rust (https://rustup.rs): `cargo install v8inline`, or in a " +
  "clone of the repository `cargo build --release`; then run that binary, or set " +
  `${BINARY_VARIABLE}=/path/to/v8inline to run it through npx.`;

function findBinary() {
  const named = process.env[BINARY_VARIABLE];
  if (named) {
    if (!fs.existsSync(named)) {
      fail(`${BINARY_VARIABLE}=${named}: no such file`, 127);
    }
    return named;
  }
  const key = platformKey();
  const released = Object.keys(require("../package.json").optionalDependencies || {});
  const packageName = released.includes(PLATFORM_PACKAGES[key]) ? PLATFORM_PACKAGES[key] : null;
  if (!packageName) {
    const prebuilt = Object.keys(PLATFORM_PACKAGES)
      .filter((platform) => released.includes(PLATFORM_PACKAGES[platform]))
      .map(describe)
      .join(", ");
    fail(
      `no prebuilt binary for ${describe(key)}, only for ${prebuilt}. ` +
        "v8inline records with Linux perf. " +
        BUILD_FROM_SOURCE,
      127,
    );
  }
  try {
    return require.resolve(`${packageName}/${BINARY_IN_PACKAGE}`);
  } catch (_) {
    fail(
      `the package ${packageName}, which holds the binary for ${describe(key)}, is not ` +
        "installed. It is an optional dependency of v8inline: install again without " +
        "--omit=optional (npm), --no-optional (pnpm, yarn) or a lockfile made on another " +
        `platform. ${BUILD_FROM_SOURCE}`,
      127,
    );
  }
}

const binary = findBinary();
const child = childProcess.spawn(binary, process.argv.slice(2), { stdio: "inherit" });

const forward = (signal) => child.kill(signal);
const outlive = () => {};
for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
for (const signal of GROUP_SIGNALS) process.on(signal, outlive);

child.on("error", (error) => {
  // As a shell says it: 126 found but not executable, 127 not found.
  const exitCode = error.code === "ENOENT" ? 127 : 126;
  fail(`${binary}: ${error.message}`, exitCode);
});

child.on("exit", (code, signal) => {
  if (signal === null) {
    process.exit(code);
  }
  // Die of the same signal, so that a shell or CI sees what the binary saw
  // (bash stops a script whose command died of SIGINT); 128 + the signal's
  // number, as shells report it, where the signal does not end node.
  for (const name of FORWARDED_SIGNALS) process.removeListener(name, forward);
  for (const name of GROUP_SIGNALS) process.removeListener(name, outlive);
  try {
    process.kill(process.pid, signal);
  } catch (_) {
    // An unknown signal name: exit below.
  }
  process.exit(128 + (os.constants.signals[signal] || 0));
});
