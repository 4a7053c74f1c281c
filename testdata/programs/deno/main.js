// deno run: says whether the V8 flag --expose-gc reached V8 (v8inline record
// merges the user's --v8-flags with its own), then runs deep.js.
console.log(`gc: ${typeof gc}`);
require('./deep.js');
