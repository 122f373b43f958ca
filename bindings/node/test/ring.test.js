'use strict';
// The binding against real rings in shared memory, checked against ringctl.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');

const shmring = require('shmring');
const { freshRing, smallRing } = require('./ringctl.js');

const KEYS = Array.from({ length: 1000 }, (_, i) => `key-${i}`);

function open(ringctl, options = {}) {
  return new shmring.Ring(ringctl.name, { directory: ringctl.directory, ...options });
}

/** Waits (up to 60 s, polling) until CONDITION() is true. */
async function waitFor(condition, what) {
  const deadline = Date.now() + 60000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// Lookups agree with ringctl ------------------------------------------------------

for (const algorithm of ['ring', 'maglev', 'ketama']) {
  test(`lookups answer as ringctl does (${algorithm})`, (t) => {
    const ringctl = freshRing(t);
    ringctl.run('init', '--algorithm', algorithm);
    ringctl.loadNodes(50);
    ringctl.run('weight', 'node7', '5');
    const expected = ringctl.lookup(KEYS);
    const ring = open(ringctl);
    const byId = new Map(ring.nodes().map((node) => [node.id, node]));
    assert.equal(byId.size, 50);
    for (const key of KEYS) {
      const node = ring.lookup(key);
      assert.deepEqual([[node.name, node.address]], expected.get(key));
      assert.equal(ring.lookupId(key), node.id);
      assert.equal(byId.get(node.id), node);
    }
    assert.deepEqual([...ring.lookupIds(KEYS)].map((id) => [byId.get(id).name, byId.get(id).address]),
      KEYS.map((key) => expected.get(key)[0]));
    ring.close();
  });
}

test('lookupN answers as ringctl lookup -n does', (t) => {
  const ringctl = smallRing(t);
  const expected = ringctl.lookup(KEYS.slice(0, 200), 3);
  const ring = open(ringctl);
  for (const key of KEYS.slice(0, 200)) {
    const nodes = ring.lookupN(key, 3);
    assert.deepEqual(nodes.map((node) => [node.name, node.address]), expected.get(key));
    assert.equal(nodes[0], ring.lookup(key));
  }
  ring.close();
});

test('lookupN takes n from 1, and at most what the ring has', (t) => {
  const ring = open(smallRing(t));
  assert.equal(ring.lookupN('k', 1).length, 1);
  assert.equal(ring.lookupN('k', 1.5).length, 1);
  for (const n of [3, 4, 64, 65, 2 ** 31, 2 ** 64, Infinity]) {
    assert.equal(ring.lookupN('k', n).length, 3);
  }
  for (const n of [0, 0.5, -1, -Infinity, NaN]) {
    assert.throws(() => ring.lookupN('k', n), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
  }
  for (const n of [undefined, null, '3', 3n, {}]) {
    assert.throws(() => ring.lookupN('k', n), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  }
  assert.equal(shmring.LOOKUP_N_MAX, 64);
  ring.close();
});

// Node objects --------------------------------------------------------------------

test('a node is one frozen object per node of a version', (t) => {
  const ringctl = smallRing(t);
  const ring = open(ringctl);
  const node = ring.lookup('user:42');
  assert.ok(Object.isFrozen(node));
  assert.deepEqual(Object.keys(node), ['id', 'name', 'address', 'weight']);
  assert.equal(ring.lookup('user:42'), node);
  assert.equal(ring.node(node.id), node);
  assert.ok(ring.nodes().includes(node));

  // A version of other content: new objects.
  ringctl.run('weight', node.name, '7');
  const changed = ring.lookup('user:42');
  assert.notEqual(changed, node);
  assert.equal(changed.weight, 7);
  assert.equal(ring.lookup('user:42'), changed);

  // Back to the first content: a new generation, the fingerprint of the first, and
  // objects equal to the first's.
  ringctl.run('weight', node.name, String(node.weight));
  const back = ring.lookup('user:42');
  assert.deepEqual(back, node);
  assert.equal(ring.generation, 6);

  // Unseen versions of one fingerprint keep the objects a lookup made.
  ringctl.run('weight', node.name, '9');
  ringctl.run('weight', node.name, String(node.weight));
  assert.equal(ring.lookup('user:42'), back);
  assert.equal(ring.generation, 8);
  ring.close();
});

test('lookup() follows a version that another call saw first', (t) => {
  const ringctl = smallRing(t);
  const ring = open(ringctl);
  const node = ring.lookup('user:42');
  ringctl.run('weight', node.name, '7');
  // node() follows the new version before lookup() is asked again: lookup() must not
  // answer from the objects it kept for the first one.
  const followed = ring.node(node.id);
  assert.equal(followed.weight, 7);
  const looked = ring.lookup('user:42');
  assert.equal(looked, followed);
  assert.equal(looked.weight, 7);

  ringctl.run('weight', node.name, '8');
  const [first] = ring.lookupN('user:42', 1);
  assert.equal(first.weight, 8);
  assert.equal(ring.lookup('user:42'), first);
  ring.close();
});

test('nodes of any id: one object each below 65,536, answers as ringctl above', (t) => {
  const ringctl = freshRing(t);
  const ids = [3, 40000, 70000];
  ringctl.runWithInput(JSON.stringify({
    nodes: ids.map((id) => ({ id, name: `n${id}`, address: `10.0.0.${id % 250}:11211` })),
  }), 'load', '-');
  const ring = open(ringctl);
  const answers = ringctl.lookup(KEYS);
  const seen = new Map();
  for (const key of KEYS) {
    const node = ring.lookup(key);
    assert.equal(node.name, answers.get(key)[0][0], key);
    assert.equal(node.address, answers.get(key)[0][1], key);
    assert.equal(ring.lookupId(key), node.id, key);
    if (!seen.has(node.id)) seen.set(node.id, node);
    if (node.id < 65536) assert.equal(node, seen.get(node.id), key);
    else assert.deepEqual(node, seen.get(node.id), key);
  }
  assert.deepEqual([...seen.keys()].sort((a, b) => a - b), ids);
  ring.close();
});

// Keys ----------------------------------------------------------------------------

test('every kind of key is looked up as its bytes', (t) => {
  const ring = open(smallRing(t));
  const texts = ['plain', '', 'caf\u00e9', '\u65e5\u672c', 'emoji \u{1f600}', 'a\0b',
    'x'.repeat(507) + '\u00e9\u{1f600}', '\u{1f600}'.repeat(300), 'y'.repeat(100000)];
  for (const text of texts) {
    const bytes = Buffer.from(text);
    const expected = ring.lookupId(bytes);
    const copy = new Uint8Array(bytes.length + 3);
    copy.set(bytes, 3);
    const keys = [text, new Uint8Array(bytes), copy.subarray(3),
      new DataView(copy.buffer, 3, bytes.length), copy.buffer.slice(3)];
    if (bytes.length % 2 === 0) keys.push(new Uint16Array(copy.buffer.slice(3)));
    for (const key of keys) {
      assert.equal(ring.lookupId(key), expected, `${text.slice(0, 20)} as ${key.constructor.name}`);
      assert.equal(ring.lookup(key).id, expected);
      assert.equal(ring.lookupN(key, 1)[0].id, expected);
    }
    assert.deepEqual(ring.lookupIds(keys), new Uint32Array(keys.length).fill(expected));
  }
  // A lone surrogate is looked up as Buffer.from() encodes it (U+FFFD).
  assert.equal(ring.lookupId('bad \udc80 key'), ring.lookupId(Buffer.from('bad \udc80 key')));
  ring.close();
});

test('a key of another type is a TypeError', (t) => {
  const ring = open(smallRing(t));
  for (const key of [undefined, null, 42, 4.2, 42n, true, {}, ['a'], Symbol('k'), () => 1]) {
    for (const call of [(k) => ring.lookup(k), (k) => ring.lookupId(k), (k) => ring.lookupN(k, 2),
      (k) => ring.lookupIds(['ok', k])]) {
      assert.throws(() => call(key), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    }
  }
  assert.throws(() => ring.lookup(), { name: 'TypeError' });
  for (const keys of [undefined, 'abc', new Set(['a']), { length: 1, 0: 'a' }]) {
    assert.throws(() => ring.lookupIds(keys), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  }
  ring.close();
});

test('lookupIds answers a batch from one version', (t) => {
  const ring = open(smallRing(t));
  assert.deepEqual(ring.lookupIds([]), new Uint32Array(0));
  const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
  const expected = Uint32Array.from(keys, (key) => ring.lookupId(key));
  assert.deepEqual(ring.lookupIds(keys), expected);
  const sparse = new Array(3);
  assert.throws(() => ring.lookupIds(sparse), { name: 'TypeError' });
  // An element's getter that closes the ring: the batch is refused, nothing crashes.
  const hostile = ['a', 'b'];
  Object.defineProperty(hostile, 1, { get() { ring.close(); return 'b'; } });
  assert.throws(() => ring.lookupIds(hostile), { code: 'ERR_SHMRING_CLOSED' });
  assert.equal(ring.closed, true);
});

// Errors --------------------------------------------------------------------------

function assertShmringError(call, Class, code, message) {
  assert.throws(call, (error) => {
    assert.ok(error instanceof Class, `${error.name} is not a ${Class.name}`);
    assert.ok(error instanceof shmring.ShmringError);
    assert.ok(error instanceof Error);
    assert.equal(error.name, Class.name);
    assert.equal(error.code, code);
    assert.equal(error.errno, shmring.codes[code]);
    assert.equal(error.message, message);
    assert.match(error.stack, new RegExp(`^${Class.name}: `));
    return true;
  });
}

test('opening fails with the library code and message', (t) => {
  const ringctl = freshRing(t);
  const directory = ringctl.directory;
  assertShmringError(() => new shmring.Ring('web', { directory }), shmring.RingNotFoundError,
    'SHMRING_ENOENT', "no such ring: 'web'");
  for (const name of ['', 'a/b', 'x'.repeat(201), 'a\0b', '..', 'sp ace']) {
    assertShmringError(() => new shmring.Ring(name, { directory }), shmring.InvalidArgumentError,
      'SHMRING_EBADRING', 'invalid ring name' + (name.length > 201 || name.includes('\0') ? '' : `: '${name}'`));
  }
  assertShmringError(() => new shmring.Ring('web', { directory: 'relative' }),
    shmring.InvalidArgumentError, 'SHMRING_EBADDIR',
    "ring directory must be an absolute path of at most 1024 bytes: 'relative'");
  assertShmringError(() => new shmring.Ring('web', { directory: '/nonexistent/shmring' }),
    shmring.RingNotFoundError, 'SHMRING_ENODIR', "no such ring directory: '/nonexistent/shmring'");
  assertShmringError(() => new shmring.Ring('web', { directory: '/proc' }),
    shmring.InvalidArgumentError, 'SHMRING_ENOTRINGDIR',
    "not a ring directory (a kernel filesystem such as /proc): '/proc'");
  assert.throws(() => new shmring.Ring('web', { directory: '/etc/passwd' }), (error) => {
    assert.ok(error instanceof shmring.InvalidArgumentError);
    assert.equal(error.code, 'ENOTDIR');
    assert.equal(error.errno, -20);
    assert.equal(error.message, "Not a directory: '/etc/passwd'");
    return true;
  });
  for (const trustedOwner of [-1, 2 ** 32 - 1, 2 ** 32, 1.5, NaN]) {
    assertShmringError(() => new shmring.Ring('web', { directory, trustedOwner }),
      shmring.InvalidArgumentError, 'SHMRING_EINVAL', 'invalid argument');
  }
  assert.throws(() => new shmring.Ring('web', { trustedOwner: '0' }), { name: 'TypeError' });
  assert.throws(() => new shmring.Ring('web', { directory: 5 }), { name: 'TypeError' });
  assert.throws(() => new shmring.Ring('web', 'options'), { name: 'TypeError' });
  assert.throws(() => new shmring.Ring(42), { name: 'TypeError' });
  assert.throws(() => shmring.Ring('web'), { name: 'TypeError' });
});

test('lookups fail with EmptyRingError, AllNodesDownError and NoSuchNodeError', (t) => {
  const ringctl = freshRing(t);
  ringctl.run('init');
  const ring = open(ringctl);
  for (const call of [() => ring.lookup('k'), () => ring.lookupId('k'), () => ring.lookupN('k', 2),
    () => ring.lookupIds([])]) {
    assertShmringError(call, shmring.EmptyRingError, 'SHMRING_EEMPTY', 'ring has no nodes');
  }
  ringctl.run('add', 'a', '10.0.0.1:11211');
  ringctl.run('down', 'a');
  assertShmringError(() => ring.lookup('k'), shmring.AllNodesDownError, 'SHMRING_EALLDOWN',
    'all nodes of the ring are down');
  for (const id of [1, 2 ** 32 - 1, 2 ** 32, -1, 0.5, NaN]) {
    assertShmringError(() => ring.node(id), shmring.NoSuchNodeError, 'SHMRING_ENODE', 'no such node');
  }
  assert.equal(ring.node(0).name, 'a');
  assert.throws(() => ring.node('0'), { name: 'TypeError' });
  ring.close();
});

test('codes and messages come from the library', () => {
  assert.equal(shmring.codes.SHMRING_ENOENT, -2);
  assert.equal(shmring.codes.SHMRING_EEMPTY, -1000);
  assert.equal(shmring.codes.SHMRING_ERENUMBER, -1037);
  assert.ok(Object.isFrozen(shmring.codes));
  assert.equal(shmring.strerror(-1000), 'ring has no nodes');
  assert.equal(shmring.strerror(shmring.codes.SHMRING_ENODE), 'no such node');
  assert.throws(() => shmring.strerror('x'), { name: 'TypeError' });
});

// Status, fingerprint, snapshot ---------------------------------------------------

test('status(), fingerprint and snapshot() say what the ring answers from', (t) => {
  const ringctl = smallRing(t);
  const ring = open(ringctl);
  const fingerprint = ringctl.fingerprint();
  assert.match(fingerprint, /^[0-9a-f]{16}$/);
  const status = ring.status();
  assert.deepEqual(status, { present: true, destroyed: false, generation: 4, fingerprint, error: null, failedFormat: 0 });
  assert.ok(Object.isFrozen(status));
  assert.equal(ring.fingerprint, fingerprint);
  assert.equal(ring.generation, 4);
  const snapshot = ring.snapshot();
  assert.equal(snapshot.generation, 4);
  assert.equal(snapshot.fingerprint, fingerprint);
  assert.deepEqual(snapshot.nodes.map((n) => [n.name, n.address, n.weight]),
    [['a', '10.0.0.1:11211', 1], ['b', '10.0.0.2:11211', 2], ['c', '10.0.0.3:11211', 1]]);
  assert.deepEqual(snapshot.nodes.map((n) => n.id).sort(), [0, 1, 2]);
  assert.ok(Object.isFrozen(snapshot) && Object.isFrozen(snapshot.nodes));
  // status() follows a version published since the last lookup.
  ringctl.run('add', 'd', '10.0.0.4:11211');
  assert.deepEqual(ring.status(), { present: true, destroyed: false, generation: 5,
    fingerprint: ringctl.fingerprint(), error: null, failedFormat: 0 });
  ring.close();
});

test('status() says the ring was destroyed, and follows it made again', async (t) => {
  const ringctl = smallRing(t);
  const ring = open(ringctl);
  const fingerprint = ringctl.fingerprint();
  const answer = ring.lookup('k');
  ringctl.run('destroy');
  assert.deepEqual(ring.status(), { present: false, destroyed: true, generation: 4, fingerprint,
    error: 'SHMRING_ENOENT', failedFormat: 0 });
  assert.equal(ring.lookup('k'), answer);
  ringctl.run('init');
  ringctl.run('add', 'z', '10.0.0.26:11211');
  // The library retries a destroyed ring's name every 100 ms or so.
  await waitFor(() => ring.status().present, 'the ring made again');
  assert.deepEqual(ring.status(), { present: true, destroyed: false, generation: 2,
    fingerprint: ringctl.fingerprint(), error: null, failedFormat: 0 });
  assert.equal(ring.lookup('k').name, 'z');
  ring.close();
});

// close, versions, declarations ----------------------------------------------------

test('close() is final and idempotent', (t) => {
  const ring = open(smallRing(t));
  const node = ring.lookup('k');
  assert.equal(ring.closed, false);
  ring.close();
  ring.close();
  assert.equal(ring.closed, true);
  assert.deepEqual(node, { ...node });
  for (const call of [() => ring.lookup('k'), () => ring.lookupId('k'), () => ring.lookupIds(['k']),
    () => ring.lookupN('k', 1), () => ring.node(0), () => ring.nodes(), () => ring.snapshot(),
    () => ring.status(), () => ring.generation, () => ring.fingerprint]) {
    assert.throws(call, { name: 'Error', code: 'ERR_SHMRING_CLOSED', message: 'the shmring Ring is closed' });
  }
  assert.throws(() => shmring.Ring.prototype.lookup.call({}, 'k'), { name: 'TypeError' });
  assert.throws(() => require('shmring/build/Release/shmring.node').lookup({}, 'k'),
    { name: 'TypeError', message: 'not a shmring Ring' });
});

test('one version: the package, the addon and the library are CMake\'s', () => {
  const packageDir = path.dirname(require.resolve('shmring'));
  const { version } = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  assert.ok(process.env.SHMRING_VERSION, 'SHMRING_VERSION is not set');
  assert.deepEqual([version, shmring.version, shmring.libraryVersion],
    Array(3).fill(process.env.SHMRING_VERSION));
});

test('index.d.ts declares every export and every Ring member', () => {
  const declarations = fs.readFileSync(path.join(path.dirname(require.resolve('shmring')),
    'index.d.ts'), 'utf8');
  for (const name of Object.keys(shmring).filter((n) => !n.startsWith('_'))) {
    assert.match(declarations, new RegExp(`^export (const|class|function) ${name}\\b`, 'm'), name);
  }
  const ringDeclaration = declarations.slice(declarations.indexOf('export class Ring'));
  for (const name of Object.getOwnPropertyNames(shmring.Ring.prototype)) {
    if (name === 'constructor') continue;
    assert.match(ringDeclaration.slice(0, ringDeclaration.indexOf('\n}')),
      new RegExp(`^  (readonly )?${name}\\b`, 'm'), name);
  }
});

test('a worker thread loads the addon again and opens its own Ring', async (t) => {
  const ringctl = smallRing(t);
  const { Worker } = require('node:worker_threads');
  const ring = open(ringctl);
  const expected = KEYS.slice(0, 100).map((key) => ring.lookup(key).name);
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads');
    const shmring = require(workerData.module);
    const ring = new shmring.Ring(workerData.name, { directory: workerData.directory });
    parentPort.postMessage(workerData.keys.map((key) => ring.lookup(key).name));
    ring.close();`, { eval: true, workerData: { module: require.resolve('shmring'),
    name: ringctl.name, directory: ringctl.directory, keys: KEYS.slice(0, 100) } });
  const [answers] = await Promise.all([
    new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); }),
    new Promise((resolve) => worker.once('exit', resolve)),
  ]);
  assert.deepEqual(answers, expected);
  // The main thread's ring is untouched by the worker's exit.
  assert.equal(ring.lookup(KEYS[0]).name, expected[0]);
  ring.close();
});
