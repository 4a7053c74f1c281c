// benchmark.js times the two kinds of work; `record` finds its benchmarks.
'use strict';
const Benchmark = require('benchmark');
const work = require('./work.cjs');

const options = { maxTime: 0.4, minSamples: 5 };
new Benchmark.Suite()
  .add('sum of squares', () => work.sumOfSquares(), options)
  .add('join words', () => work.joinWords(), options)
  .on('cycle', (event) => console.log(String(event.target)))
  .run();
