'use strict';
// Starts each child of the plan in turn, as test runners start their
// workers (child_process.spawn), and stops it the way they do: with a signal
// (SIGTERM or SIGKILL) after some milliseconds, or lets it exit on its own.
//
//   CHILD='["node", "--perf-prof", ..., "deep.js", "3000"]' \
//     node parent.js none none SIGTERM:412 SIGKILL:1530 ...
//
// Appends one line per child to children.txt:
//   PID SIGNAL MILLIS EXIT_CODE EXIT_SIGNAL
// (SIGNAL `none` and MILLIS 0 for a child that exits on its own).

const { spawn } = require('child_process');
const fs = require('fs');

const command = JSON.parse(process.env.CHILD);
const plan = process.argv.slice(2);

async function run(entry) {
  const [signal, millis] = entry.split(':');
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
  const timer = signal === 'none' ? undefined : setTimeout(() => child.kill(signal), Number(millis));
  const [code, exitSignal] = await new Promise((resolve) => child.on('exit', (...exit) => resolve(exit)));
  clearTimeout(timer);
  fs.appendFileSync('children.txt', `${child.pid} ${signal} ${millis || 0} ${code} ${exitSignal}\n`);
}

(async () => {
  for (const entry of plan) await run(entry);
})();
