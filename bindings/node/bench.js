#!/usr/bin/env node
'use strict';
// What a lookup costs from Node.js, next to its floor and npm's hashring.
//
// For rings of 10, 100 and 1,000 nodes (ring algorithm, 160 xxh3 points per node,
// made with ringctl in a private directory under /dev/shm), prints from one run, in
// ns per key over 100,000 distinct string keys (best of several interleaved passes,
// the loop included):
//
//   - the empty loop over the keys;
//   - shmring._noop(key): a no-op function of the addon with one argument, the floor
//     of any call from JavaScript into C;
//   - ring.lookupId(key), ring.lookup(key), and ring.lookupIds(keys) per key;
//   - hashring's HashRing#get(key) over the same node names (npm's hashring, the ring
//     the memcached client uses: 160 MD5 points per server and an LRU cache of
//     answers, which distinct keys miss);
//
// then the ratios hashring / lookup, lookup / lookupId and lookupId / _noop.
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
const SIZES = quick ? [10] : [10, 100, 1000];
const KEY_COUNT = quick ? 10000 : 100000;
const VNODES = 160;

const keys = Array.from({ length: KEY_COUNT }, (_, i) => `user:${i}:${(i * 2654435761) >>> 0}`);

function nodeSet(count) {
  return Array.from({ length: count }, (_, i) => ({
    name: `node${i}`,
    address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:11211`,
  }));
}

// Each timer runs one pass over KEYS and returns ns per key. A sink keeps the loops'
// results alive, so that nothing is optimized away.
let sink = 0;
function loopTimer(call) {
  return () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < keys.length; i++) {
      if (call(keys[i]) === sink) sink++;
    }
    return Number(process.hrtime.bigint() - start) / keys.length;
  };
}

function bestOf(contenders) {
  const best = new Map();
  for (let pass = 0; pass < PASSES; pass++) {
    for (const [label, timer] of contenders) {
      const ns = timer();
      if (!best.has(label) || ns < best.get(label)) best.set(label, ns);
    }
  }
  return best;
}

const directory = fs.mkdtempSync(path.join('/dev/shm', 'shmring-node-bench-'));
try {
  console.log(`shmring ${shmring.version} (library ${shmring.libraryVersion}), Node.js ${process.version}`);
  console.log(`${KEY_COUNT} distinct string keys, ${VNODES} points per node; ns per key, best of ${PASSES} interleaved passes`);
  console.log(HashRing ? `hashring ${hashringVersion}` : 'hashring: not installed (npm install hashring), its rows are left out');
  for (const size of SIZES) {
    const name = `bench${process.pid}-${size}`;
    const nodes = nodeSet(size);
    execFileSync(RINGCTL, ['--dir', directory, '-r', name, 'load', '-'], {
      input: JSON.stringify({ algorithm: 'ring', hash: 'xxh3', vnodes: VNODES, nodes }),
    });
    const ring = new shmring.Ring(name, { directory });
    ring.lookupIds(keys); // Maps the version before any timing.
    const contenders = new Map([
      ['empty loop', loopTimer((key) => key)],
      ['shmring._noop(key)', loopTimer(shmring._noop)],
      ['ring.lookupId(key)', loopTimer((key) => ring.lookupId(key))],
      ['ring.lookup(key)', loopTimer((key) => ring.lookup(key))],
      ['ring.lookupIds(keys), per key', () => {
        const start = process.hrtime.bigint();
        sink += ring.lookupIds(keys).length;
        return Number(process.hrtime.bigint() - start) / keys.length;
      }],
    ]);
    if (HashRing) {
      const hashring = new HashRing(nodes.map((node) => node.name));
      contenders.set('hashring get(key)', loopTimer((key) => hashring.get(key)));
    }
    const best = bestOf(contenders);
    console.log(`\nring of ${size} nodes (${size * VNODES} points)`);
    for (const [label, ns] of best) console.log(`  ${label.padEnd(34)}${ns.toFixed(1).padStart(9)} ns`);
    const ratio = (a, b) => `${(best.get(a) / best.get(b)).toFixed(2)}x`;
    if (HashRing) console.log(`  ${'hashring get / lookup'.padEnd(34)}${ratio('hashring get(key)', 'ring.lookup(key)').padStart(10)}`);
    console.log(`  ${'lookup / lookupId'.padEnd(34)}${ratio('ring.lookup(key)', 'ring.lookupId(key)').padStart(10)}`);
    console.log(`  ${'lookupId / _noop'.padEnd(34)}${ratio('ring.lookupId(key)', 'shmring._noop(key)').padStart(10)}`);
    ring.close();
  }
} finally {
  fs.rmSync(directory, { recursive: true, force: true });
}
if (sink === -1) console.log(sink);
