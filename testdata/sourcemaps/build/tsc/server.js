"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
// A request loop whose hot path inlines parseHeader (another module) into
// handleRequest.
const parse_1 = require("./http/parse");
function handleRequest(headers, seed) {
    let digest = seed;
    for (const header of headers) {
        digest = (0, parse_1.parseHeader)(header, digest);
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
console.log(serve(Number(process.argv[2] ?? 1000)));
//# sourceMappingURL=server.js.map