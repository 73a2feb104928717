'use strict';
// harness.js - what the browser tests share: a check counter with the exit
// codes ctest reads, headless Chromium launched through Playwright with the
// project's flags, guards on pages (console errors, uncaught exceptions,
// network requests), screenshots into the test's output folder, and the
// project's programs: gcsnap, mock dumps from gcsnap-agent, a gcsnapd on
// free loopback ports with agents connected to it.
//
// A test file is one call:
//   const h = require('./harness');
//   h.run('name', async (t) => { ... t.equal(actual, expected, 'what') ... });
// It exits 1 when a check failed, 77 when one was skipped and none failed,
// else 0. Environment (set by run.sh): GS_BIN, GS_OUT, GS_SHARED_DIR,
// GS_CHROMIUM. See README.md.

const { chromium } = require('playwright-core');
const childProcess = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');

const BIN = process.env.GS_BIN || '';
const OUT = process.env.GS_OUT || fs.mkdtempSync(path.join(os.tmpdir(), 'gcsnap-browser-'));
const SHARED = process.env.GS_SHARED_DIR || '';
const CHROMIUM = process.env.GS_CHROMIUM || '/usr/bin/chromium';

// The flags every test launches Chromium with: headless, no sandbox (CI runs
// as root), and nothing that reaches out to the network on its own.
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// ---- checks ----------------------------------------------------------------

class Checks {
  constructor(name) {
    this.name = name;
    this.passed = 0;
    this.failed = 0;
    this.skipped = 0;
  }

  ok(cond, desc, detail) {
    if (cond) { this.passed++; return true; }
    this.failed++;
    console.log(`FAIL: ${desc}` + (detail === undefined ? '' : `\n  | ${String(detail).split('\n').join('\n  | ')}`));
    return false;
  }

  // Deep equality through JSON (numbers, strings, arrays, plain objects).
  equal(actual, expected, desc) {
    const a = JSON.stringify(actual), e = JSON.stringify(expected);
    return this.ok(a === e, desc, `got      ${clip(a)}\nexpected ${clip(e)}`);
  }

  skip(desc) {
    this.skipped++;
    console.log(`SKIP: ${desc}`);
  }

  note(text) {
    console.log(`${this.name}: ${text}`);
  }
}

function clip(s) {
  return s === undefined ? 'undefined' : s.length > 600 ? s.slice(0, 600) + '...' : s;
}

const cleanups = [];

// Runs the test body, then every cleanup (browsers, processes) in reverse
// order, prints the tally and exits with the code ctest reads.
function run(name, body) {
  const t = new Checks(name);
  const started = Date.now();
  (async () => {
    try {
      await body(t);
    } catch (e) {
      t.ok(false, 'the test ran to its end', e && e.stack ? e.stack : e);
    }
    while (cleanups.length) {
      try { await cleanups.pop()(); } catch (e) { console.log(`cleanup: ${e.message}`); }
    }
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`${name}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped (${secs} s; output in ${OUT})`);
    process.exit(t.failed ? 1 : t.skipped ? 77 : 0);
  })();
}

function atExit(fn) {
  cleanups.push(fn);
}

// ---- the browser -------------------------------------------------------------

// Launches Chromium in a fresh profile (removed at exit). With
// {remoteDebugging: true} it also listens for DevTools on a free loopback
// port, given as `port`, and lets the DevTools frontend (devtools://) connect.
async function launch({ remoteDebugging = false, viewport = { width: 1280, height: 900 } } = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gcsnap-chromium-'));
  const args = CHROMIUM_FLAGS.slice();
  if (remoteDebugging) args.push('--remote-debugging-port=0', '--remote-allow-origins=devtools://devtools');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args, viewport,
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await context.close().catch(() => {});
    fs.rmSync(profile, { recursive: true, force: true });
  };
  atExit(close);
  let port = 0;
  if (remoteDebugging) {
    // Chromium writes the port it chose on the first line of this file.
    const file = path.join(profile, 'DevToolsActivePort');
    for (let i = 0; i < 100 && !fs.existsSync(file); i++) await sleep(50);
    port = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
  }
  return { context, port, close };
}

// Blocks every request of the context except file:, data: and blob: URLs,
// and goes offline; returns the list of the blocked URLs, to assert it empty.
async function blockNetwork(context) {
  const blocked = [];
  await context.setOffline(true);
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (/^(file|data|blob):/.test(url)) return route.continue();
    if (!blocked.includes(url)) blocked.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('request', (req) => {
    const url = req.url();
    if (!/^(file|data|blob):/.test(url) && !blocked.includes(url)) blocked.push(url);
  });
  return blocked;
}

// Lets the context reach url's origin (and data: URLs) only; returns the
// list of the other URLs it asked for, which were refused, to assert it empty.
async function onlyOrigin(context, url) {
  const origin = new URL(url).origin, foreign = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith('data:') || new URL(u).origin === origin) return route.continue();
    foreign.push(u);
    return route.abort('blockedbyclient');
  });
  return foreign;
}

// Records what goes wrong in a page: console errors and uncaught exceptions.
function watch(page) {
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`exception: ${e.message}`));
  return errors;
}

// Saves a PNG of what the page's viewport shows as OUT/name.png; with a
// Locator, scrolled so that the element starts at the top. (A viewport is
// cheap to capture; a whole tall page takes seconds.)
async function screenshot(page, name, locator) {
  const file = path.join(OUT, `${name}.png`);
  if (locator) await locator.evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: file });
  return file;
}

// Waits until fn (run in the page with arg) returns true; false on timeout.
async function until(page, fn, arg, timeout = 10000) {
  try {
    await page.waitForFunction(fn, arg, { timeout });
    return true;
  } catch (e) {
    return false;
  }
}

// ---- DevTools ------------------------------------------------------------------

// The id of a blank page of a browser launched with {remoteDebugging: true},
// for the DevTools frontend to attach to.
async function devtoolsTarget(browser) {
  const blank = browser.context.pages()[0] || await browser.context.newPage();
  await blank.goto('about:blank');
  const targets = await getJson(`http://127.0.0.1:${browser.port}/json/list`);
  const target = targets.find((x) => x.type === 'page' && x.url === 'about:blank');
  if (!target) throw new Error(`no blank page for DevTools to attach to: ${JSON.stringify(targets)}`);
  return target.id;
}

// The DevTools frontend bundled with Chromium on its Memory panel, with the
// snapshot file (titled name there) loaded through the panel's "Load
// profile" input and its Summary shown: {dt, item, errors} (item: its
// entry in the sidebar; errors: what its page reported), or null with a
// failed check and a screenshot when it is not loaded within a minute.
async function loadInDevTools(t, browser, target, name, file) {
  const dt = await browser.context.newPage();
  const errors = watch(dt);
  const ws = `127.0.0.1:${browser.port}/devtools/page/${target}`;
  await dt.goto(`devtools://devtools/bundled/devtools_app.html?ws=${ws}&panel=heap-profiler`);
  await dt.locator('input[type=file]').first().setInputFiles(file, { timeout: 30000 });
  const item = dt.locator('li.heap-snapshot-sidebar-tree-item', { has: dt.locator('.title', { hasText: new RegExp(`^${name}$`) }) });
  // Loaded when the title shows the size; DevTools reports a snapshot it
  // cannot read as an error on its page, so stop waiting at the first one.
  const sized = item.locator('.subtitle').filter({ hasText: /^\(\s*[\d.,]+\s*(B|kB|MB|GB)\s*\)$/ });
  let loaded = false;
  for (const end = Date.now() + 60000; !loaded && !errors.length && Date.now() < end;) {
    loaded = await sized.waitFor({ timeout: 250 }).then(() => true, () => false);
  }
  if (loaded) {
    await item.locator('.title').click();
    loaded = await dt.locator('tr.data-grid-data-grid-node td.object-column').first()
      .waitFor({ timeout: 30000 }).then(() => true, () => false);
  }
  if (!t.ok(loaded, `${name}: DevTools loads the snapshot and shows its Summary`, errors.join('\n'))) {
    await screenshot(dt, `devtools-${name}-failed`);
    await dt.close();
    return null;
  }
  return { dt, item, errors };
}

// Every object of the loaded snapshot titled name that DevTools' Summary
// lists (those of size 0 it leaves out), from its own worker through the
// panel's view: [[id, class, retained size, shallow size], ...].
async function devtoolsObjects(dt, name) {
  return dt.evaluate(async (title) => {
    const profiler = await import('./panels/profiler/profiler.js');
    const view = profiler.HeapProfilerPanel.HeapProfilerPanel.instance().visibleView;
    if (!view || !view.profile || view.profile.title !== title) throw new Error('no view of the snapshot');
    const proxy = view.profile.snapshotProxy;
    const objects = [];
    for (const [key, a] of Object.entries(await proxy.aggregatesWithFilter({}))) {
      const nodes = proxy.createNodesProviderForClass(key, {});
      for (const n of (await nodes.serializeItemsRange(0, a.count)).items) objects.push([n.id, a.name, n.retainedSize, n.selfSize]);
      nodes.dispose();
    }
    return objects;
  }, name);
}

// ---- the project's programs ---------------------------------------------------

function tool(name) {
  return path.join(BIN, name);
}

function haveTool(name) {
  try { fs.accessSync(tool(name), fs.constants.X_OK); return true; } catch (e) { return false; }
}

// Runs gcsnap with args; returns its stdout, throws with its stderr on failure.
function gcsnap(...args) {
  return childProcess.execFileSync(tool('gcsnap'), args, { cwd: OUT, encoding: 'utf8', maxBuffer: 1 << 30 });
}

function gcsnapJson(...args) {
  return JSON.parse(gcsnap(...args));
}

// Writes a dump of the agent's deterministic mock heap (e.g.
// 'mock:objects=3000,seed=5') to OUT/file; returns its path.
function mockDump(source, file, extra = []) {
  const out = path.join(OUT, file);
  childProcess.execFileSync(tool('gcsnap-agent'), ['--source', source, '--clock', '0', ...extra, '--out', out],
    { stdio: ['ignore', 'ignore', 'inherit'] });
  return out;
}

// The folder with fixtures/wpfapp.gclog, or '' when it is absent.
function sharedFixture(name) {
  const file = SHARED ? path.join(SHARED, 'fixtures', name) : '';
  return file && fs.existsSync(file) ? file : '';
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Starts a child that is stopped (SIGTERM, then SIGKILL after 5 s) at exit;
// its stderr goes to OUT/<log>.
function spawnLogged(file, args, log) {
  const fd = fs.openSync(path.join(OUT, log), 'w');
  const child = childProcess.spawn(file, args, { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await child.exited;
    clearTimeout(timer);
  };
  child.stop = stop;
  atExit(stop);
  return child;
}

async function getJson(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.json();
}

// Waits until check() resolves true, up to timeout ms; throws with what.
async function waitFor(what, check, timeout = 30000) {
  const end = Date.now() + timeout;
  for (;;) {
    try { if (await check()) return; } catch (e) { /* not yet */ }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

// Starts gcsnapd on free loopback ports with a store in OUT/<name>-store;
// resolves when its HTTP API answers. Returns {url, agentAddress, process,
// stop()}. Extra gcsnapd arguments may be given in opts.args.
async function startCollector(opts = {}) {
  const name = opts.name || 'gcsnapd';
  const agentPort = await freePort();
  const httpPort = await freePort();
  const store = path.join(OUT, `${name}-store`);
  const child = spawnLogged(tool('gcsnapd'), ['--listen', `127.0.0.1:${agentPort}`, '--http', `127.0.0.1:${httpPort}`,
    '--store', store, ...(opts.args || [])], `${name}.log`);
  const url = `http://127.0.0.1:${httpPort}`;
  await waitFor('the collector\'s HTTP API', async () => {
    if (child.exitCode !== null) throw new Error(`gcsnapd exited; see ${path.join(OUT, name + '.log')}`);
    return (await fetch(`${url}/api/health`)).ok;
  });
  return { url, agentAddress: `127.0.0.1:${agentPort}`, store, process: child, stop: child.stop };
}

// Starts an agent connected to collector as deviceId (source: a heap source
// spec, default a small mock heap); resolves once the collector lists the
// device as connected.
async function startAgent(collector, deviceId, source = 'mock:objects=2000,seed=1', extra = []) {
  const child = spawnLogged(tool('gcsnap-agent'), ['--source', source, '--connect', collector.agentAddress,
    '--device-id', deviceId, ...extra], `agent-${deviceId.replace(/[^A-Za-z0-9._-]/g, '_')}.log`);
  await waitFor(`device ${deviceId} to connect`, async () => {
    if (child.exitCode !== null) throw new Error(`gcsnap-agent ${deviceId} exited`);
    const { devices } = await getJson(`${collector.url}/api/devices`);
    return devices.some((d) => d.device_id === deviceId && d.connected);
  });
  return child;
}

// "1,234,567", "+12", "-3" (also with narrow spaces) as a number; NaN if not one.
function parseCount(text) {
  const digits = String(text).replace(/[,\s\u00a0\u202f]/g, '').replace(/^\+/, '');
  return /^-?\d+(\.\d+)?$/.test(digits) ? Number(digits) : NaN;
}

module.exports = {
  BIN, OUT, SHARED, CHROMIUM, CHROMIUM_FLAGS,
  run, atExit, launch, blockNetwork, onlyOrigin, watch, screenshot, until,
  devtoolsTarget, loadInDevTools, devtoolsObjects,
  tool, haveTool, gcsnap, gcsnapJson, mockDump, sharedFixture,
  freePort, sleep, getJson, waitFor, spawnLogged, startCollector, startAgent, parseCount,
};
