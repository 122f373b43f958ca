'use strict';
// shmring in a real Node.js cluster: an HTTP server (cluster_app.js) of 4 workers on
// loopback, started before its ring exists. Every worker must answer 1,000 keys
// exactly as `ringctl lookup` does, follow `ringctl add` and `remove` on its next
// request, say that the ring was destroyed, and follow it made again. At 10,000 nodes
// each worker reports how long its first lookup after a publication took (the
// switch stall), which this test prints: a figure, never a pass/fail threshold.
// Then the README's worker, run as the README writes it.
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');

const { freshRing } = require('./ringctl.js');

const WORKERS = 4;
const ROUNDS = 200;
const KEYS = Array.from({ length: 1000 }, (_, i) => `key-${i}`);

/** Starts `node SCRIPT` (a cluster primary) with ENV added; resolves with the port
 * it prints once its workers listen. It is killed, with its workers, when T ends. */
async function startServer(t, script, env) {
  const server = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  server.stderr.on('data', (chunk) => { log += chunk; });
  t.after(async () => {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      try { process.kill(-server.pid, 'SIGKILL'); } catch { /* gone already */ }
      await exited;
    }
    if (log) t.diagnostic(`server stderr: ${log}`);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not listen in 120 s: ${log}`)), 120000);
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/listening (\d+)\n/);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    server.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}): ${log}`));
    });
  });
}

/** One request on a connection of its own; resolves with {status, body}. */
function request(port, method, urlPath, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, agent: false,
      timeout: 120000 }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Makes rounds of WORKERS requests at once, each answered by CHECK(status, answer),
 * until every worker answered; returns each worker's first answer by pid. */
async function everyWorker(port, check) {
  const first = new Map();
  for (let round = 0; round < ROUNDS && first.size < WORKERS; round++) {
    const responses = await Promise.all(Array.from({ length: WORKERS },
      () => request(port, 'POST', '/', KEYS.join('\n'))));
    for (const { status, body } of responses) {
      const answer = JSON.parse(body);
      check(status, answer);
      if (!first.has(answer.pid)) first.set(answer.pid, answer);
    }
  }
  assert.equal(first.size, WORKERS, `only ${first.size} workers answered in ${ROUNDS} rounds`);
  return first;
}

/** Every worker answers as ringctl does, from ringctl's generation and fingerprint. */
async function checkAnswers(port, ringctl) {
  const expected = ringctl.lookup(KEYS);
  const expectedAnswers = KEYS.map((key) => expected.get(key)[0]);
  const generation = ringctl.generation();
  const fingerprint = ringctl.fingerprint();
  return everyWorker(port, (status, answer) => {
    assert.equal(status, 200, JSON.stringify(answer));
    assert.equal(answer.generation, generation);
    assert.equal(answer.generationAfter, generation);
    assert.equal(answer.fingerprint, fingerprint);
    assert.deepEqual(answer.answers, expectedAnswers);
    assert.deepEqual(answer.ids, answer.idsOneByOne);
    assert.deepEqual(answer.ids.map((id) => answer.nodes[id]), expectedAnswers);
    assert.equal(answer.firstIsCached, true);
  });
}

test('4 cluster workers answer as ringctl and follow every change', async (t) => {
  const ringctl = freshRing(t, 'cluster');
  const port = await startServer(t, path.join(__dirname, 'cluster_app.js'),
    { SHMRING_TEST_RING: ringctl.name, SHMRING_TEST_DIR: ringctl.directory });
  const pids = new Set();

  // Started before the ring exists: every worker says so, and keeps running.
  await everyWorker(port, (status, answer) => {
    assert.equal(status, 503);
    assert.equal(answer.error, 'SHMRING_ENOENT');
    assert.equal(answer.message, `no such ring: '${ringctl.name}'`);
    pids.add(answer.pid);
  });

  ringctl.run('init');
  ringctl.loadNodes(30);
  const opened = await checkAnswers(port, ringctl);
  assert.deepEqual(new Set(opened.keys()), pids);

  ringctl.run('add', 'extra', '10.9.9.9:11211', '--weight', '20');
  assert.equal(ringctl.generation(), 3);
  await checkAnswers(port, ringctl);
  ringctl.run('remove', 'node3');
  assert.equal(ringctl.generation(), 4);
  await checkAnswers(port, ringctl);

  // Destroyed: every worker says so on its next request ...
  ringctl.run('destroy');
  await everyWorker(port, (status, answer) => {
    assert.equal(status, 503);
    assert.deepEqual(answer, { pid: answer.pid, destroyed: true, generation: 4 });
  });
  // ... and follows the ring made again (its handle retries the name every 100 ms or
  // so): rounds until every worker answered from it, then every answer must be it.
  ringctl.run('init');
  ringctl.loadNodes(12);
  const deadline = Date.now() + 120000;
  for (;;) {
    const answers = await everyWorker(port, () => {});
    if ([...answers.values()].every((answer) => answer.generation === 2 && !answer.destroyed)) break;
    assert.ok(Date.now() < deadline, 'the workers did not follow the ring made again');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.deepEqual(new Set((await checkAnswers(port, ringctl)).keys()), pids);

  // The switch stall at 10,000 nodes: each worker's first lookup after a publication
  // maps and validates the new version, on the event loop.
  ringctl.loadNodes(10000);
  const stalls = [];
  for (const answer of (await checkAnswers(port, ringctl)).values()) stalls.push(answer);
  ringctl.run('add', 'one-more', '10.200.0.1:11211');
  for (const answer of (await checkAnswers(port, ringctl)).values()) stalls.push(answer);
  const steady = [...(await checkAnswers(port, ringctl)).values()];
  const ms = (answers) => answers.map((a) => (a.firstLookupNs / 1e6).toFixed(2)).join(', ');
  const cpuMs = (answers) => answers.map((a) => (a.firstLookupCpuUs / 1e3).toFixed(1)).join(', ');
  t.diagnostic(`switch stall at 10,000 nodes, the first lookup after a publication, per ` +
    `worker: ${ms(stalls)} ms (CPU ${cpuMs(stalls)} ms); a first lookup without a switch: ` +
    `${ms(steady)} ms (CPU ${cpuMs(steady)} ms); load average ${os.loadavg()[0].toFixed(2)}`);
});

// Leases in the cluster ----------------------------------------------------------------

test('4 cluster workers release every lease, on every path, errors included', async (t) => {
  const ringctl = freshRing(t, 'lease');
  ringctl.run('init', '--workers-group', String(process.getgid()), '--balance-factor', '1.25');
  ringctl.destroyAtEnd = true;
  ringctl.loadNodes(8);
  const port = await startServer(t, path.join(__dirname, 'cluster_app.js'),
    { SHMRING_TEST_LEASE_RING: ringctl.name, SHMRING_TEST_DIR: ringctl.directory });
  const modes = ['return', 'reject', 'throw', 'finally', 'finally-throw'];
  const expected = { return: 200, reject: 500, throw: 500, finally: 200, 'finally-throw': 500 };
  const REQUESTS = 400;
  const pids = new Set();
  let sent = 0;
  // 40 requests in flight at a time, each holding its lease across an await.
  const client = async () => {
    while (sent < REQUESTS) {
      const i = sent++;
      const mode = modes[i % modes.length];
      const { status, body } = await request(port, 'GET', `/lease?key=key-${i % 50}&mode=${mode}`);
      const answer = JSON.parse(body);
      assert.equal(status, expected[mode], `${mode}: ${body}`);
      pids.add(answer.pid);
    }
  };
  await Promise.all(Array.from({ length: 40 }, client));
  const { board } = JSON.parse(ringctl.run('show', '--json'));
  // The workers are alive: no count was given back by a sweep of a dead one's slot.
  assert.deepEqual({ in_flight: board.in_flight, acquires: board.acquires,
    workers: board.workers, reclaimed: board.reclaimed },
  { in_flight: 0, acquires: REQUESTS, workers: pids.size, reclaimed: 0 });
  assert.equal(pids.size, WORKERS);
  t.diagnostic(`${REQUESTS} requests (${modes.join(', ')}) on ${pids.size} workers: ` +
    `0 in flight after them; first candidate ${board.first_candidate} of ${board.acquires}`);
});

// The README's worker, run as it is written there ------------------------------------

/** The README's `// server.js` example, exactly as the README shows it. */
function readmeServer() {
  const text = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const start = text.indexOf('```js\n// server.js');
  assert.ok(start >= 0, 'README.md has no ```js // server.js example');
  return text.slice(start + '```js\n'.length, text.indexOf('```', start + 3));
}

test("the README's worker: started before its ring, routing, destroyed", async (t) => {
  const ringctl = freshRing(t, 'readme');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shmring-node-readme-'));
  t.after(() => fs.rmSync(work, { recursive: true, force: true }));
  fs.writeFileSync(path.join(work, 'server.js'), readmeServer());
  const port = await startServer(t, path.join(work, 'server.js'),
    { SHMRING_RING: ringctl.name, SHMRING_DIR: ringctl.directory, PORT: '0' });
  const get = (key) => request(port, 'GET', `/${key}`);

  for (let i = 0; i < 2 * WORKERS; i++) {
    assert.deepEqual(await get('user:42'),
      { status: 503, body: `ring ${ringctl.name} does not exist yet\n` });
  }
  ringctl.run('init');
  ringctl.loadNodes(20);
  const keys = KEYS.slice(0, 200);
  let expected = ringctl.lookup(keys);
  for (const key of keys) {
    const [[name, address]] = expected.get(key);
    assert.deepEqual(await get(key), { status: 200, body: `${key} -> ${name} ${address} (generation 2)\n` });
  }
  ringctl.run('down', 'node3');
  expected = ringctl.lookup(keys);
  for (const key of keys) {
    const [[name, address]] = expected.get(key);
    assert.deepEqual(await get(key), { status: 200, body: `${key} -> ${name} ${address} (generation 3)\n` });
  }
  ringctl.run('destroy');
  for (let i = 0; i < 2 * WORKERS; i++) {
    assert.deepEqual(await get('user:42'),
      { status: 503, body: `ring ${ringctl.name} was destroyed (generation 3)\n` });
  }
});
