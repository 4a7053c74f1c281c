// A request loop whose hot path inlines parseHeader (another module) into
// handleRequest.
import { Header, parseHeader } from "./http/parse";

declare const process: { argv: string[] };

function handleRequest(headers: Header[], seed: number): number {
  let digest = seed;
  for (const header of headers) {
    digest = parseHeader(header, digest);
  }
  return digest;
}

function serve(millis: number): number {
  const headers: Header[] = [];
  for (let index = 0; index < 16; index++) {
    headers.push({ name: `x-header-${index}`, value: `value ${index * 7919} of the request` });
  }
  const end = Date.now() + millis;
  let digest = 0;
  while (Date.now() < end) {
    for (let request = 0; request < 200; request++) {
      digest = handleRequest(headers, digest);
    }
  }
  return digest;
}

console.log(serve(Number(process.argv[2] ?? 1000)));
