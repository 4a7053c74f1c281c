// Two kinds of work, each a function of its own name, that the programs
// here time: each benchmark's profile must hold its own.

export function sumOfSquares() {
  let sum = 0;
  for (let i = 0; i < 300000; i++) sum = (sum + ((i * i) % 7)) | 0;
  return sum;
}

export function joinWords() {
  const words = [];
  for (let i = 0; i < 20000; i++) words.push(`w${i % 97}`);
  return words.join(' ').length;
}
