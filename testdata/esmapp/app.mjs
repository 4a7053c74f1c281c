// The program behind testdata/esmapp (recorded by testdata/esmapp/record.sh):
// a "real app" made of ES modules, the way users' profiles of ESM code look.
//
// prettier (an ES module, index.mjs, which imports its parser and printer
// plugins, plugins/babel.mjs and plugins/estree.mjs, as further module files)
// formats a fixed input over and over: two of prettier's own files, doc.mjs
// (its document builders, plain esbuild output) and
// internal/experimental-cli-worker.mjs (classes, async functions, template
// literals), each with two sets of options in turn. TurboFan inlines
// functions of one module file into code of another (index.mjs's doc
// utilities into estree.mjs's printer, estree.mjs's printer functions into
// index.mjs's), which is what the jitdump DEBUG_INFO records of these
// recordings are about.
//
// Runs under node and Deno alike (node: builtins only).
//
// Usage: node app.mjs [MILLIS]        (formats until MILLIS have passed)
//        deno run -A app.mjs [MILLIS]

import { readFileSync } from 'node:fs';
import process from 'node:process';
import * as prettier from 'prettier';

const inputs = ['doc.mjs', 'internal/experimental-cli-worker.mjs'].map((file) =>
  readFileSync(new URL(`./node_modules/prettier/${file}`, import.meta.url), 'utf8'));
const variants = [
  { parser: 'babel' },
  { parser: 'babel', printWidth: 60, semi: false, singleQuote: true, trailingComma: 'none' },
];

// A string hash, so that the output is used and the run can be checked.
function checksum(text, seed) {
  let hash = seed | 0;
  for (let index = 0; index < text.length; index += 7) {
    hash = (Math.imul(hash, 31) + text.charCodeAt(index)) | 0;
  }
  return hash;
}

const millis = Number(process.argv[2] || 3000);
const deadline = Date.now() + millis;
let rounds = 0;
let hash = 0;
while (Date.now() < deadline) {
  const input = inputs[rounds % inputs.length];
  const options = variants[Math.floor(rounds / inputs.length) % variants.length];
  const output = await prettier.format(input, options);
  hash = checksum(output, hash);
  rounds++;
}
console.log(`rounds=${rounds} checksum=${hash} inputs=${inputs.map((text) => text.length).join('+')} bytes`);
