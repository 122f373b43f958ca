'use strict';
// Real rings for the tests: each in its own directory under /dev/shm (mode 0700,
// removed afterwards), made and changed with the built ringctl (SHMRING_RINGCTL, or
// ringctl from PATH).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

let counter = 0;

class RingCtl {
  constructor(directory, name) {
    this.directory = directory;
    this.name = name;
    this.binary = process.env.SHMRING_RINGCTL || 'ringctl';
  }

  run(...args) {
    return this.runWithInput(null, ...args);
  }

  runWithInput(input, ...args) {
    return execFileSync(this.binary, ['--dir', this.directory, '-r', this.name, ...args], {
      input: input === null ? undefined : input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 256 << 20,
    });
  }

  /** Maps each key to ringctl's answers: a list of [name, address] pairs. */
  lookup(keys, n) {
    const args = ['lookup', ...(n ? ['-n', String(n)] : []), '--', ...keys];
    const answers = new Map();
    for (const line of this.run(...args).split('\n')) {
      if (line === '') continue;
      const fields = line.split('\t');
      const pairs = [];
      for (let i = 1; i + 1 < fields.length; i += 2) pairs.push([fields[i], fields[i + 1]]);
      answers.set(fields[0], pairs);
    }
    return answers;
  }

  /** Replaces the node set with COUNT nodes through one `ringctl load`. */
  loadNodes(count, extra = {}) {
    const nodes = [];
    for (let i = 0; i < count; i++) {
      nodes.push({ name: `node${i}`,
        address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:11211` });
    }
    this.runWithInput(JSON.stringify({ ...extra, nodes }), 'load', '-');
  }

  generation() {
    return JSON.parse(this.run('show', '--json')).generation;
  }

  /** The fingerprint as `ringctl show` prints it. */
  fingerprint() {
    return this.run('show').match(/^fingerprint: +([0-9a-f]+)$/m)[1];
  }
}

/** A fresh ring directory and a RingCtl for a unique ring name in it (the ring is not
 * created); the directory is removed when the test ends, and the ring destroyed
 * first when the test set `destroyAtEnd`. */
function freshRing(t, prefix = 'node') {
  const directory = fs.mkdtempSync(path.join('/dev/shm', 'shmring-node-'));
  const ringctl = new RingCtl(directory, `${prefix}${process.pid}-${counter++}`);
  t.after(() => {
    // A ring with a load board is destroyed first: that removes the board's segment,
    // which removing the directory would leave behind.
    if (ringctl.destroyAtEnd) ringctl.run('destroy');
    fs.rmSync(directory, { recursive: true, force: true });
  });
  return ringctl;
}

/** A ring of three nodes: a (weight 1), b (weight 2), c (weight 1). */
function smallRing(t) {
  const ringctl = freshRing(t);
  ringctl.run('init');
  ringctl.run('add', 'a', '10.0.0.1:11211');
  ringctl.run('add', 'b', '10.0.0.2:11211', '--weight', '2');
  ringctl.run('add', 'c', '10.0.0.3:11211');
  return ringctl;
}

module.exports = { RingCtl, freshRing, smallRing };
