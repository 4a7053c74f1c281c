// The suite of testdata/history (make.sh): fast-xml-parser's parser and
// validator on three documents generated here, deterministically (a seeded
// xorshift), under tinybench, 500 ms a benchmark. The same file runs against
// every release; each release's directory installs its own fast-xml-parser.
//
//   svg:   an SVG drawing of 120 paths whose `d` attributes hold 2,000 to
//          4,000 characters of path data (long quoted attribute values)
//   feed:  an RSS feed of 400 items, attributes on most elements, entities
//          (&amp; &lt; &#39; ...) in some texts and attribute values
//   xhtml: a page of 300 sections with <pre> and <script> blocks holding
//          markup, parsed with those two as stop nodes
import { Bench } from 'tinybench';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

let state = 0x2545f4914f6cdd1dn;
function random() {
  state ^= state >> 12n;
  state ^= (state << 25n) & 0xffffffffffffffffn;
  state ^= state >> 27n;
  return Number(((state * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn) >> 11n) / 2 ** 53;
}
const int = (n) => Math.floor(random() * n);
const pick = (list) => list[int(list.length)];
const words = 'parser release node stream buffer element attribute entity value tag text path matcher option number string order version tree document'.split(' ');
const sentence = (n) => Array.from({ length: n }, () => pick(words)).join(' ');

function svgDocument() {
  const paths = [];
  for (let p = 0; p < 120; p++) {
    const length = 2000 + int(2000);
    let d = `M${int(1000)} ${int(1000)}`;
    while (d.length < length) d += ` ${pick('LCQ')}${(random() * 1000).toFixed(2)},${(random() * 1000).toFixed(2)}`;
    paths.push(`  <path id="p${p}" fill="#${int(0xffffff).toString(16).padStart(6, '0')}" stroke-width="${int(5)}" d="${d} Z"/>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1000 1000" width="1000" height="1000">\n<g transform="translate(0,0)">\n${paths.join('\n')}\n</g>\n</svg>\n`;
}

function feedDocument() {
  const entities = ['&amp;', '&lt;', '&gt;', '&quot;', '&#39;', '&#x2014;'];
  const items = [];
  for (let i = 0; i < 400; i++) {
    const title = random() < 0.3 ? `${sentence(4)} ${pick(entities)} ${sentence(3)}` : sentence(7);
    items.push(`  <item id="${i}" lang="en" rank="${int(100)}">
    <title type="text">${title}</title>
    <link href="https://example.org/${i}?a=1${random() < 0.2 ? '&amp;b=2' : ''}" rel="alternate"/>
    <description>${sentence(30)}${random() < 0.4 ? ` ${pick(entities)} ${sentence(10)}` : ''}</description>
    <category term="${pick(words)}" scheme="urn:${pick(words)}"/>
    <pubDate>2026-0${1 + int(9)}-1${int(10)}T12:00:00Z</pubDate>
    <guid isPermaLink="false">urn:uuid:${int(1e9)}-${int(1e9)}</guid>
    <price currency="EUR">${(random() * 100).toFixed(2)}</price>
  </item>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0">\n<channel>\n  <title>releases</title>\n${items.join('\n')}\n</channel>\n</rss>\n`;
}

function xhtmlDocument() {
  const sections = [];
  for (let s = 0; s < 300; s++) {
    sections.push(`  <div class="section" id="s${s}">
    <h2 class="title">${sentence(5)}</h2>
    <p class="text">${sentence(25)}</p>
    <pre class="code"><span class="kw">const</span> x = <b>${int(100)}</b>; <i>${sentence(6)}</i> <span>${sentence(4)}</span></pre>
    <script type="text/plain">if (a &lt; b) { <em>${sentence(3)}</em> }</script>
    <ul>${Array.from({ length: 4 }, (_, k) => `<li data-k="${k}">${sentence(3)}</li>`).join('')}</ul>
  </div>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<html>\n<head><title>page</title></head>\n<body>\n${sections.join('\n')}\n</body>\n</html>\n`;
}

const svg = svgDocument();
const feed = feedDocument();
const xhtml = xhtmlDocument();

const attributes = { ignoreAttributes: false, attributeNamePrefix: '@_' };
const svgParser = new XMLParser(attributes);
const feedParser = new XMLParser(attributes);
const xhtmlParser = new XMLParser({ ...attributes, stopNodes: ['*.pre', '*.script'] });

const bench = new Bench({ time: 500, iterations: 10, warmupTime: 100, warmupIterations: 5, retainSamples: true });
bench.add('parse svg', function parseSvg() {
  return svgParser.parse(svg);
});
bench.add('validate svg', function validateSvg() {
  return XMLValidator.validate(svg);
});
bench.add('parse feed', function parseFeed() {
  return feedParser.parse(feed);
});
bench.add('parse xhtml with stop nodes', function parseXhtml() {
  return xhtmlParser.parse(xhtml);
});
await bench.run();
console.log(`svg ${svg.length} chars, feed ${feed.length}, xhtml ${xhtml.length}`);
for (const task of bench.tasks) {
  const latency = task.result.latency;
  console.log(`${task.name}: ${latency.mean.toFixed(2)} ms ± ${latency.sd.toFixed(2)} ms (${latency.samplesCount} runs)`);
}
