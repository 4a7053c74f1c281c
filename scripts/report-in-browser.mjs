// Opens a page in a headless Chromium already listening for DevTools on
// 127.0.0.1:PORT, as a person would see it at WIDTHxHEIGHT, and says what it
// found: every request that was not a local file (a page that must open
// offline makes none), every console message of level error and every
// uncaught exception, and the layout's facts (the page's width against the
// window, the plots' sizes). Saves a screenshot of the first screen and one
// of the whole page.
//
//   node --experimental-websocket scripts/report-in-browser.mjs PORT URL OUT_PREFIX [WIDTH HEIGHT]
//
// Prints one JSON object; exits 0 (the caller judges).
const [port, url, prefix, width = '1366', height = '768'] = process.argv.slice(2);
import { writeFileSync } from 'node:fs';

const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const page = targets.find((target) => target.type === 'page');
const socket = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((resolve, reject) => {
  socket.onopen = resolve;
  socket.onerror = reject;
});
let next = 0;
const pending = new Map();
const events = [];
const waiters = [];
socket.onmessage = (message) => {
  const data = JSON.parse(message.data);
  if (data.id !== undefined && pending.has(data.id)) {
    const { resolve, reject } = pending.get(data.id);
    pending.delete(data.id);
    if (data.error) reject(new Error(JSON.stringify(data.error)));
    else resolve(data.result);
  } else if (data.method) {
    events.push(data);
    for (const waiter of waiters.filter((waiter) => waiter.method === data.method)) waiter.resolve(data);
  }
};
const send = (method, params = {}) =>
  new Promise((resolve, reject) => {
    const id = ++next;
    pending.set(id, { resolve, reject });
    socket.send(JSON.stringify({ id, method, params }));
  });
const eventually = (method) => new Promise((resolve) => waiters.push({ method, resolve }));

await send('Network.enable');
await send('Runtime.enable');
await send('Log.enable');
await send('Page.enable');
await send('Emulation.setDeviceMetricsOverride', {
  width: Number(width),
  height: Number(height),
  deviceScaleFactor: 1,
  mobile: false,
});
const loaded = eventually('Page.loadEventFired');
await send('Page.navigate', { url });
await Promise.race([loaded, new Promise((resolve) => setTimeout(resolve, 20000))]);
// Images decode after the load event on a slow machine.
await new Promise((resolve) => setTimeout(resolve, 1000));

const layout = await send('Runtime.evaluate', {
  returnByValue: true,
  expression: `(() => {
    const box = (element) => { const rect = element.getBoundingClientRect(); return [Math.round(rect.width), Math.round(rect.height)]; };
    return {
      title: document.title,
      scrollWidth: document.documentElement.scrollWidth,
      plots: [...document.querySelectorAll('figure svg')].map(box),
      images: [...document.querySelectorAll('img')].map((image) => ({ src: image.getAttribute('src'), width: image.naturalWidth })),
      firstScreen: document.elementFromPoint(10, ${Number(height) - 10}) ? true : false,
      verdictTableTop: (() => { const table = document.querySelector('table.verdicts, table.change-points'); return table ? Math.round(table.getBoundingClientRect().top) : null; })(),
      firstPlotTop: (() => { const plot = document.querySelector('figure svg'); return plot ? Math.round(plot.getBoundingClientRect().top) : null; })(),
    };
  })()`,
});
const first = await send('Page.captureScreenshot', { format: 'png' });
writeFileSync(`${prefix}.png`, Buffer.from(first.data, 'base64'));
const metrics = await send('Page.getLayoutMetrics');
const size = metrics.cssContentSize || metrics.contentSize;
const whole = await send('Page.captureScreenshot', {
  format: 'png',
  captureBeyondViewport: true,
  clip: { x: 0, y: 0, width: Number(width), height: Math.min(Math.ceil(size.height), 16000), scale: 1 },
});
writeFileSync(`${prefix}-full.png`, Buffer.from(whole.data, 'base64'));
// The whole page again in screens of 1,100 px, each small enough to look at.
for (let part = 0; part * 1100 < Math.min(size.height, 16000); part++) {
  const screen = await send('Page.captureScreenshot', {
    format: 'png',
    captureBeyondViewport: true,
    clip: { x: 0, y: part * 1100, width: Number(width), height: Math.min(1100, size.height - part * 1100), scale: 1 },
  });
  writeFileSync(`${prefix}-part${part + 1}.png`, Buffer.from(screen.data, 'base64'));
}

const requests = events
  .filter((event) => event.method === 'Network.requestWillBeSent')
  .map((event) => event.params.request.url);
const errors = [
  ...events
    .filter((event) => event.method === 'Runtime.consoleAPICalled' && ['error', 'assert'].includes(event.params.type))
    .map((event) => `console.${event.params.type}: ${event.params.args.map((arg) => arg.value ?? arg.description).join(' ')}`),
  ...events
    .filter((event) => event.method === 'Runtime.exceptionThrown')
    .map((event) => `exception: ${event.params.exceptionDetails.text} ${event.params.exceptionDetails.exception?.description ?? ''}`),
  ...events
    .filter((event) => event.method === 'Log.entryAdded' && event.params.entry.level === 'error')
    .map((event) => `log: ${event.params.entry.text} ${event.params.entry.url ?? ''}`),
  ...events
    .filter((event) => event.method === 'Network.loadingFailed')
    .map((event) => `failed to load: ${event.params.errorText} (${event.params.requestId})`),
];
console.log(JSON.stringify({ url, requests, errors, layout: layout.result.value, height: size.height }));
socket.close();
process.exit(0);
