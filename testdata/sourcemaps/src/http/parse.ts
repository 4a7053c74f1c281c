// Header parsing: the inner end of the hot inlined chain.

export interface Header {
  name: string;
  value: string;
}

export function hashText(text: string, seed: number): number {
  let hash = seed;
  for (let index = 0; index < text.length; index++) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 16777619);
  }
  return hash;
}

export function parseHeader(header: Header, seed: number): number {
  const nameHash = hashText(header.name, seed);
  return hashText(header.value, nameHash);
}
