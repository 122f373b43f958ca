#!/usr/bin/env node
'use strict';
// What a lookup costs from Node.js, next to its floor and npm's hashring.
//
// For rings of 10, 100, 1,000 and 10,000 nodes (ring algorithm, 160 xxh3 points per
// node, made with ringctl in a private directory under /dev/shm), prints from one run,
// in ns per key over 100,000 distinct string keys (the loop included):
//
//   - the empty loop over the keys;
//   - shmring._noop(key): a no-op function of the addon with one argument, the floor
//     of any call from JavaScript into C;
//   - ring.lookupId(key), ring.lookup(key), and ring.lookupIds(chunk) per key (one
//     call per chunk of about 1,000 keys);
//   - hashring's HashRing#get(key) over the same node names (npm's hashring, the ring
//     the memcached client uses: 160 MD5 points per server and an LRU cache of
//     answers, which distinct keys miss);
//
// then the ratios hashring / lookup, lookup / lookupId (with its target: a lookup
// returning a node costs at most 1.3x one returning an id; reported, never enforced)
// and lookupId / _noop.
//
// The contenders take turns by chunks of about 1,000 keys rather than by whole passes,
// in an order where each follows every other equally often (balancedOrder), so that
// none always runs on the caches another has just swept. A contender's pass is the sum
// of its chunks' times over the whole key stream; the best of PASSES passes is printed.
//
// Usage: bench.js [--quick] [--passes N] [--ringctl PATH]   (PATH defaults to
// $SHMRING_RINGCTL, then ringctl on PATH). hashring is require()d from NODE_PATH or
// node_modules (CMake's shmring_node_bench target installs hashring@3.2.0 there);
// without it, its rows say so. --quick: one small ring, one pass (a smoke test).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const shmring = require('shmring');

let HashRing = null;
let hashringVersion = null;
try {
  HashRing = require('hashring');
  hashringVersion = require('hashring/package.json').version;
} catch {
  HashRing = null;
}

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const passesArg = args.indexOf('--passes');
const PASSES = quick ? 1 : passesArg >= 0 ? Number(args[passesArg + 1]) : 7;
const ringctlArg = args.indexOf('--ringctl');
const RINGCTL = ringctlArg >= 0 ? args[ringctlArg + 1] : process.env.SHMRING_RINGCTL || 'ringctl';
const SIZES = quick ? [10] : [10, 100, 1000, 10000];
const KEY_COUNT = quick ? 10000 : 100000;
const VNODES = 160;
const CHUNK = 1000;
const TARGET = 1.3; // lookup / lookupId at most: a node object costs little

const keys = Array.from({ length: KEY_COUNT }, (_, i) => `user:${i}:${(i * 2654435761) >>> 0}`);

function nodeSet(count) {
  return Array.from({ length: count }, (_, i) => ({
    name: `node${i}`,
    address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:11211`,
  }));
}

// Each runner runs one chunk (an array of keys) and returns the ns it took. A sink
// keeps the loops' results alive, so that nothing is optimized away.
let sink = 0;
function loopRunner(call) {
  return (chunk) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < chunk.length; i++) {
      if (call(chunk[i]) === sink) sink++;
    }
    return Number(process.hrtime.bigint() - start);
  };
}

// An order of count contenders, as a cycle of count * (count - 1) turns, in which each
// contender takes count - 1 turns and follows every other exactly once: an Eulerian
// circuit of the complete directed graph on the contenders (Hierholzer's algorithm).
// Taking turns in a fixed round (0, 1, ..., count - 1) would put the same contender
// after the one that sweeps the caches every time.
function balancedOrder(count) {
  if (count === 1) return [0];
  const unused = Array.from({ length: count }, (_, from) =>
    Array.from({ length: count }, (_, to) => to).filter((to) => to !== from));
  const stack = [0];
  const circuit = [];
  while (stack.length > 0) {
    const from = stack[stack.length - 1];
    if (unused[from].length === 0) circuit.push(stack.pop());
    else stack.push(unused[from].shift());
  }
  // It starts and ends at 0: as a cycle, one 0 is enough.
  return circuit.reverse().slice(1);
}

// The best of PASSES passes of each contender, in ns per key. A pass cuts the keys
// into chunks of about CHUNK, as many as whole cycles of balancedOrder need, and runs
// every contender once over every chunk, the contenders taking turns chunk by chunk in
// that order; a contender's pass is the sum of its chunks. Each contender walks the
// chunks from its own place in the key stream, evenly spaced, so that none runs on
// keys another has just brought into the caches. Each pass starts one turn further
// into the cycle, so that no contender always opens a pass.
function measure(contenders) {
  const labels = [...contenders.keys()];
  const runners = [...contenders.values()];
  const order = balancedOrder(labels.length);
  const turnsPerContender = labels.length - 1; // in one cycle of order
  let count = Math.ceil(keys.length / CHUNK);
  count = Math.ceil(count / turnsPerContender) * turnsPerContender;
  const bound = (c) => Math.floor((c * keys.length) / count);
  const chunks = Array.from({ length: count }, (_, c) => keys.slice(bound(c), bound(c + 1)));
  const firstChunk = labels.map((_, row) => Math.floor((row * count) / labels.length));
  const best = labels.map(() => Infinity);
  for (let pass = 0; pass < PASSES; pass++) {
    const elapsed = labels.map(() => 0);
    const nextChunk = labels.map(() => 0);
    for (let turn = 0; turn < labels.length * count; turn++) {
      const row = order[(turn + pass) % order.length];
      const c = (firstChunk[row] + nextChunk[row]) % count;
      nextChunk[row]++;
      elapsed[row] += runners[row](chunks[c]);
    }
    elapsed.forEach((ns, row) => {
      best[row] = Math.min(best[row], ns / keys.length);
    });
  }
  return new Map(labels.map((label, row) => [label, best[row]]));
}

// A ratio row, with the target where the row has one.
function ratioLine(label, ratio, target) {
  let line = `  ${label.padEnd(34)}${`${ratio.toFixed(2)}x`.padStart(10)}`;
  if (target !== undefined) line += `  (target <= ${target.toFixed(1)}x: ${ratio <= target ? 'met' : 'NOT met'})`;
  return line;
}

const directory = fs.mkdtempSync(path.join('/dev/shm', 'shmring-node-bench-'));
try {
  console.log(`shmring ${shmring.version} (library ${shmring.libraryVersion}), Node.js ${process.version}`);
  console.log(`${KEY_COUNT} distinct string keys, ${VNODES} points per node; ns per key, best of ${PASSES} passes, ` +
    `the contenders taking turns by chunks of about ${CHUNK} keys`);
  console.log(HashRing ? `hashring ${hashringVersion}` : 'hashring: not installed (npm install hashring), its rows are left out');
  for (const size of SIZES) {
    const name = `bench${process.pid}-${size}`;
    const nodes = nodeSet(size);
    execFileSync(RINGCTL, ['--dir', directory, '-r', name, 'load', '-'], {
      input: JSON.stringify({ algorithm: 'ring', hash: 'xxh3', vnodes: VNODES, nodes }),
    });
    const ring = new shmring.Ring(name, { directory });
    ring.lookupIds(keys); // Maps the version before any timing.
    // Fills the ring's node cache, as a worker's is after its first lookups, so that
    // no pass pays for the first lookup of a node.
    for (const key of keys) ring.lookup(key);
    const contenders = new Map([
      ['empty loop', loopRunner((key) => key)],
      ['shmring._noop(key)', loopRunner(shmring._noop)],
      ['ring.lookupId(key)', loopRunner((key) => ring.lookupId(key))],
      ['ring.lookup(key)', loopRunner((key) => ring.lookup(key))],
      ['ring.lookupIds(chunk), per key', (chunk) => {
        const start = process.hrtime.bigint();
        sink += ring.lookupIds(chunk).length;
        return Number(process.hrtime.bigint() - start);
      }],
    ]);
    if (HashRing) {
      const hashring = new HashRing(nodes.map((node) => node.name));
      contenders.set('hashring get(key)', loopRunner((key) => hashring.get(key)));
    }
    const best = measure(contenders);
    console.log(`\nring of ${size} nodes (${size * VNODES} points)`);
    for (const [label, ns] of best) console.log(`  ${label.padEnd(34)}${ns.toFixed(1).padStart(9)} ns`);
    const ratio = (a, b) => best.get(a) / best.get(b);
    if (HashRing) console.log(ratioLine('hashring get / lookup', ratio('hashring get(key)', 'ring.lookup(key)')));
    console.log(ratioLine('lookup / lookupId', ratio('ring.lookup(key)', 'ring.lookupId(key)'), TARGET));
    console.log(ratioLine('lookupId / _noop', ratio('ring.lookupId(key)', 'shmring._noop(key)')));
    ring.close();
  }
} finally {
  fs.rmSync(directory, { recursive: true, force: true });
}
if (sink === -1) console.log(sink);
