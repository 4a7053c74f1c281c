// A Web Worker of workers.mjs: runs ../deep.js for the MILLIS it is sent
// (deep.js reads them from process.argv[2]), then ends.
import { createRequire } from 'node:module';
import process from 'node:process';

const require = createRequire(import.meta.url);
self.onmessage = (event) => {
  process.argv[2] = event.data;
  require('./deep.js');
  self.close();
};
