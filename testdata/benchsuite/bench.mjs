// A tinybench suite timing the yaml library (eemeli/yaml) parsing two real
// YAML files of the Google Cloud SDK (Apache-2.0). `npm run bench` runs it;
// record.sh records it with `v8inline record -- npm run bench`.
import { readFileSync } from 'node:fs';
import { Bench } from 'tinybench';
import YAML from 'yaml';

const input = (name) => readFileSync(new URL(`./inputs/${name}`, import.meta.url), 'utf8');
const resourceMap = input('resource_map.yaml');
const regenApisConfig = input('regen_apis_config.yaml');

// About 1.3 s per benchmark (warm-up included), 2.5 to 3 s in all. Each
// task a function of its own, so that its profile shows whose it is.
const bench = new Bench({ time: 1000, iterations: 10, warmupTime: 250, warmupIterations: 3 });
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
