// deno test: runs deep.js (kernel -> combine -> weigh -> square) in a test.
Deno.test('deep chain', () => {
  process.argv[2] = '1000';
  require('./deep.js');
});
