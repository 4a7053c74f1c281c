// deno bench: runs deep.js (kernel -> combine -> weigh -> square) on the
// first call (require caches it).
Deno.bench('deep chain', () => {
  process.argv[2] = '1000';
  require('./deep.js');
});
