"use strict";
// Header parsing: the inner end of the hot inlined chain.
Object.defineProperty(exports, "__esModule", { value: true });
exports.hashText = hashText;
exports.parseHeader = parseHeader;
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
//# sourceMappingURL=parse.js.map