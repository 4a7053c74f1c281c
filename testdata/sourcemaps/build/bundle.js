"use strict";

// src/http/parse.ts
function hashText(text, seed) {
  let hash = seed;
  for (let index = 0; index < text.length; index++) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 16777619);
  }
  return hash;
}
function parseHeader(header, seed) {
  const nameHash = hashText(header.name, seed);
  return hashText(header.value, nameHash);
}

// src/server.ts
function handleRequest(headers, seed) {
  let digest = seed;
  for (const header of headers) {
    digest = parseHeader(header, digest);
  }
  return digest;
}
function serve(millis) {
  const headers = [];
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
console.log(serve(Number(process.argv[2] ?? 1e3)));
//# sourceMappingURL=bundle.js.map
