// The suite of study.sh: testdata/bench46/bench.mjs (yaml 2.9.1 parsing two
// real YAML files of the Google Cloud SDK under tinybench 6, 400 ms each,
// 10 iterations at least) and a third benchmark on a small document (the
// first 150 lines of one of them, about 2 ms an iteration): a benchmark of
// many iterations a run beside two of few.
import { readFileSync } from 'node:fs';
import { Bench } from 'tinybench';
import YAML from 'yaml';

const input = (name) => readFileSync(new URL(`./inputs/${name}`, import.meta.url), 'utf8');
const resourceMap = input('resource_map.yaml');
const regenApisConfig = input('regen_apis_config.yaml');
const smallDocument = `${regenApisConfig.split('\n').slice(0, 150).join('\n')}\n`;

const bench = new Bench({ time: 400, iterations: 10, warmupTime: 100, warmupIterations: 3 });
bench.add('parse resource_map.yaml', function parseResourceMap() {
  return YAML.parse(resourceMap);
});
bench.add('parse regen_apis_config.yaml', function parseRegenApisConfig() {
  return YAML.parse(regenApisConfig);
});
bench.add('parse a small document', function parseSmallDocument() {
  return YAML.parse(smallDocument);
});
await bench.run();
for (const task of bench.tasks) {
  const latency = task.result.latency;
  console.log(`${task.name}: ${latency.mean.toFixed(2)} ms ± ${latency.sd.toFixed(2)} ms (${latency.samplesCount} runs)`);
}
