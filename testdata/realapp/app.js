'use strict';
// The program behind testdata/realapp (recorded by testdata/realapp/record.sh):
// a small "real app" built on npm packages, the way users' profiles look.
//
// - acorn parses the bundled sources of the installed packages (acorn's own
//   dist file, acorn-walk's and marked's), with locations, and acorn-walk
//   visits every node: a recursive-descent parser gives deep, varied stacks.
// - marked renders the packages' README files (repeated into one large
//   document) to HTML: lexer, inline tokenizer, renderer, many regexps.
//
// Usage: node app.js [MILLIS]   (runs rounds of both until MILLIS have passed)

const fs = require('fs');
const path = require('path');
const acorn = require('acorn');
const walk = require('acorn-walk');

const modules = path.join(__dirname, 'node_modules');
const sources = [
  'acorn/dist/acorn.js',
  'acorn-walk/dist/walk.js',
  'marked/lib/marked.esm.js',
].map((file) => ({ file, text: fs.readFileSync(path.join(modules, file), 'utf8') }));
const readmes = ['acorn', 'acorn-walk', 'marked']
  .map((name) => fs.readFileSync(path.join(modules, name, 'README.md'), 'utf8'));
const markdown = Array.from({ length: 6 }, (_, copy) =>
  readmes.map((text) => `# Copy ${copy}\n\n${text}`).join('\n\n')).join('\n\n');

function countNodes(ast) {
  const counts = new Map();
  walk.full(ast, (node) => counts.set(node.type, (counts.get(node.type) || 0) + 1));
  let identifiers = 0;
  walk.simple(ast, { Identifier(node) { identifiers += node.name.length; } });
  return { kinds: counts.size, identifiers };
}

function parseAll() {
  let checksum = 0;
  for (const { text } of sources) {
    const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
    const { kinds, identifiers } = countNodes(ast);
    checksum = (checksum + ast.body.length + kinds + identifiers) | 0;
  }
  return checksum;
}

function renderAll(marked) {
  const html = marked.parse(markdown);
  const tokens = marked.lexer(readmes.join('\n\n'));
  return (html.length + tokens.length) | 0;
}

async function main() {
  const { marked } = await import('marked');
  const millis = Number(process.argv[2] || 3000);
  const deadline = Date.now() + millis;
  let rounds = 0;
  let checksum = 0;
  while (Date.now() < deadline) {
    checksum = (checksum + parseAll()) | 0;
    checksum = (checksum + renderAll(marked)) | 0;
    rounds++;
  }
  console.log(`rounds=${rounds} checksum=${checksum} markdown=${markdown.length} bytes`);
}

main();
