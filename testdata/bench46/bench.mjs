// A tinybench suite timing the yaml library (eemeli/yaml) parsing two real
// YAML files of the Google Cloud SDK (Apache-2.0). `npm run bench` runs it;
// study.sh compares it with `v8inline bench`.
import { readFileSync } from 'node:fs';
import { Bench } from 'tinybench';
import YAML from 'yaml';

const input = (name) => readFileSync(new URL(`./inputs/${name}`, import.meta.url), 'utf8');
const resourceMap = input('resource_map.yaml');
const regenApisConfig = input('regen_apis_config.yaml');

// About 0.5 s per benchmark (warm-up included), 1.5 s in all: short enough
// for study.sh to run 25 comparisons and the flags within an hour. Each
// task a function of its own, so that its profile shows whose it is.
const bench = new Bench({ time: 400, iterations: 10, warmupTime: 100, warmupIterations: 3 });
bench.add('parse resource_map.yaml', function parseResourceMap() {
  return YAML.parse(resourceMap);
});
bench.add('parse regen_apis_config.yaml', function parseRegenApisConfig() {
  return YAML.parse(regenApisConfig);
});
await bench.run();
for (const task of bench.tasks) {
  const latency = task.result.latency;
  console.log(`${task.name}: ${latency.mean.toFixed(2)} ms ± ${latency.sd.toFixed(2)} ms (${latency.samplesCount} runs)`);
}
