// mitata under `deno run`, by an npm: specifier (Deno resolves it to the
// node_modules here, or its own cache without one).
import { bench, run } from 'npm:mitata@1.0.34';
import { joinWords, sumOfSquares } from './work.js';

bench('sum of squares', () => sumOfSquares());
bench('join words', () => joinWords());
await run();
