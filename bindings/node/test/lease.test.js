'use strict';
// Bounded-load leases (Ring#acquire, Ring#withLease) against real rings and load
// boards, read back with `ringctl show --json`.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const v8 = require('node:v8');
const vm = require('node:vm');

const shmring = require('shmring');
const { freshRing, smallRing } = require('./ringctl.js');

const ELEASE = {
  name: 'ShmringError', code: 'SHMRING_ELEASE', errno: -1042,
  message: 'lease already released, or never acquired',
};

/** Three nodes of weight 1 and a board for this process's group, c = 1.25; the ring
 * is destroyed when the test ends (destroy removes the board's segment, which
 * removing the directory would leave). */
function boardRing(t) {
  const ringctl = freshRing(t, 'lease');
  ringctl.run('init', '--workers-group', String(process.getgid()), '--balance-factor', '1.25');
  for (const [i, name] of ['a', 'b', 'c'].entries()) ringctl.run('add', name, `10.0.0.${i + 1}:11211`);
  ringctl.destroyAtEnd = true;
  return ringctl;
}

/** What `ringctl show --json` says: the board's in-flight total and each node's. */
function board(ringctl) {
  const shown = JSON.parse(ringctl.run('--json', 'show'));
  return { ...shown.board, nodes: Object.fromEntries(shown.nodes.map((n) => [n.name, n.in_flight])) };
}

function open(ringctl) {
  return new shmring.Ring(ringctl.name, { directory: ringctl.directory });
}

test('acquire counts the lease, release gives it back once', (t) => {
  const ringctl = boardRing(t);
  const ring = open(ringctl);
  const lease = ring.acquire('user:42');
  assert.ok(lease instanceof shmring.Lease);
  assert.equal(lease.node, ring.lookup('user:42'));
  assert.equal(lease.candidates, 1);
  assert.equal(lease.counted, true);
  assert.equal(lease.held, true);
  let shown = board(ringctl);
  assert.equal(shown.in_flight, 1);
  assert.equal(shown.nodes[lease.node.name], 1);
  lease.release();
  assert.equal(lease.held, false);
  assert.equal(board(ringctl).in_flight, 0);
  assert.throws(() => lease.release(), ELEASE);
  shown = board(ringctl);
  assert.equal(shown.in_flight, 0);
  assert.equal(shown.acquires, 1);
  assert.throws(() => new shmring.Lease(), { name: 'TypeError' });
  ring.close();
});

test('try/finally releases when the request throws', (t) => {
  const ringctl = boardRing(t);
  const ring = open(ringctl);
  assert.throws(() => {
    const lease = ring.acquire('k');
    try {
      assert.equal(board(ringctl).in_flight, 1);
      throw new Error('the backend failed');
    } finally {
      lease.release();
    }
  }, { message: 'the backend failed' });
  assert.equal(board(ringctl).in_flight, 0);
  ring.close();
});

test('withLease releases on return and on throw', (t) => {
  const ringctl = boardRing(t);
  const ring = open(ringctl);
  const answer = ring.withLease('user:42', (node) => {
    assert.equal(node, ring.lookup('user:42'));
    assert.equal(board(ringctl).in_flight, 1);
    return `to ${node.name}`;
  });
  assert.equal(answer, `to ${ring.lookup('user:42').name}`);
  assert.equal(board(ringctl).in_flight, 0);
  assert.throws(() => ring.withLease('k', () => { throw new RangeError('bad request'); }),
    { name: 'RangeError', message: 'bad request' });
  assert.equal(board(ringctl).in_flight, 0);
  assert.throws(() => ring.withLease('k', 'not a function'), { name: 'TypeError' });
  assert.equal(board(ringctl).in_flight, 0);
  assert.equal(board(ringctl).acquires, 2);
  ring.close();
});

test('withLease releases when the returned promise resolves or rejects', async (t) => {
  const ringctl = boardRing(t);
  const ring = open(ringctl);
  let settle;
  const pending = ring.withLease('k', async (node) => {
    await new Promise((resolve) => { settle = resolve; });
    return node.name;
  });
  assert.ok(pending instanceof Promise);
  // Held across the await: released only when the promise settles.
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(board(ringctl).in_flight, 1);
  settle();
  assert.equal(await pending, ring.lookup('k').name);
  assert.equal(board(ringctl).in_flight, 0);

  await assert.rejects(ring.withLease('k', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(board(ringctl).in_flight, 1);
    throw new Error('the backend failed');
  }), { message: 'the backend failed' });
  assert.equal(board(ringctl).in_flight, 0);
  // A thenable that is not a Promise counts too.
  const thenable = { then(resolve) { setImmediate(() => resolve(7)); } };
  assert.equal(await ring.withLease('k', () => thenable), 7);
  assert.equal(board(ringctl).in_flight, 0);
  ring.close();
});

test('one key takes its candidates in turn under the bound', (t) => {
  // With N in flight every capacity is ceil(1.25 (N + 1) / 3): 1 1 2 2 3 3 3 4 for
  // N = 0..7, so one key takes its candidates in the order 0 1 0 1 0 1 2 0.
  const ringctl = boardRing(t);
  const ring = open(ringctl);
  const order = ring.lookupN('hot', 3);
  const leases = Array.from({ length: 8 }, () => ring.acquire('hot'));
  assert.deepEqual(leases.map((l) => order.indexOf(l.node)), [0, 1, 0, 1, 0, 1, 2, 0]);
  assert.deepEqual(leases.map((l) => l.candidates), [1, 2, 1, 2, 1, 2, 3, 1]);
  const shown = board(ringctl);
  assert.equal(shown.in_flight, 8);
  assert.deepEqual(order.map((n) => shown.nodes[n.name]), [4, 3, 1]);
  for (const lease of leases) lease.release();
  assert.equal(board(ringctl).in_flight, 0);
  ring.close();
});

test('without a board a lease is a plain lookup, not counted', (t) => {
  const ringctl = smallRing(t);
  const ring = open(ringctl);
  for (let i = 0; i < 100; i++) {
    const key = `key-${i}`;
    assert.equal(ring.withLease(key, (node) => node), ring.lookup(key));
  }
  const lease = ring.acquire('k');
  assert.equal(lease.counted, false);
  assert.equal(lease.candidates, 1);
  lease.release();
  assert.throws(() => lease.release(), ELEASE);
  ring.close();
});

test('errors: nothing is counted when acquire fails', (t) => {
  const ringctl = boardRing(t);
  const ring = open(ringctl);
  for (const name of ['a', 'b', 'c']) ringctl.run('down', name);
  assert.throws(() => ring.acquire('k'), { name: 'AllNodesDownError', code: 'SHMRING_EALLDOWN' });
  assert.throws(() => ring.withLease('k', () => assert.fail('called')),
    { name: 'AllNodesDownError', code: 'SHMRING_EALLDOWN' });
  assert.throws(() => ring.acquire(42), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  assert.equal(board(ringctl).in_flight, 0);
  assert.equal(board(ringctl).acquires, 0);
  const empty = freshRing(t, 'lease-empty');
  empty.run('init');
  const emptyRing = open(empty);
  assert.throws(() => emptyRing.acquire('k'), { name: 'EmptyRingError', code: 'SHMRING_EEMPTY' });
  emptyRing.close();
  ring.close();
});

test("closing the ring gives back its leases; release after it is the lease's one", (t) => {
  const ringctl = boardRing(t);
  const ring = open(ringctl);
  const lease = ring.acquire('k');
  assert.equal(board(ringctl).in_flight, 1);
  ring.close();
  assert.equal(board(ringctl).in_flight, 0);
  assert.equal(lease.held, false);
  lease.release();
  assert.throws(() => lease.release(), ELEASE);
  assert.throws(() => ring.acquire('k'), { code: 'ERR_SHMRING_CLOSED' });
});

test('the last resort: a lease collected while held is released', async (t) => {
  // The collector on demand, without --expose-gc on the command line.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const ringctl = boardRing(t);
  const ring = open(ringctl);
  (() => { ring.acquire('k'); })();
  assert.equal(board(ringctl).in_flight, 1);
  // Finalizers run after a collection, from the event loop: collect and wait.
  const deadline = Date.now() + 60000;
  while (board(ringctl).in_flight !== 0) {
    assert.ok(Date.now() < deadline, 'the collected lease was not released');
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  ring.close();
});
