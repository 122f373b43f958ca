'use strict';
// The server of cluster.test.js: an HTTP server under `cluster`, 4 workers each
// opening the ring once, on the first request that finds it. A POST's body is keys,
// one a line; the answer is JSON: the worker's pid, the generation it answered from,
// each key's node, the ids lookupIds() gives and every node of the version, and how
// long this request's first lookup took (the one that switches to a newly published
// version: the switch stall), in wall and CPU time. GET /lease serves requests under
// bounded-load leases (serveLease below). The primary prints "listening PORT" once every worker
// listens (on the one port cluster shares among them, chosen by the kernel).
const cluster = require('node:cluster');
const http = require('node:http');
const shmring = require('shmring');

const WORKERS = 4;

if (cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < WORKERS; i++) cluster.fork();
  cluster.on('listening', (worker, address) => {
    if (++listening === WORKERS) process.stdout.write(`listening ${address.port}\n`);
  });
  cluster.on('exit', (worker, code, signal) => {
    process.stderr.write(`worker ${worker.process.pid} exited (${code ?? signal})\n`);
    process.exit(1);
  });
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  let ring = null;
  let leaseRing = null;
  const server = http.createServer((request, response) => {
    if (request.url.startsWith('/lease?')) {
      serveLease(request, response);
      return;
    }
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const keys = Buffer.concat(chunks).toString().split('\n');
      let status = 200;
      let body;
      try {
        if (ring === null) {
          ring = new shmring.Ring(process.env.SHMRING_TEST_RING,
            { directory: process.env.SHMRING_TEST_DIR });
        }
        // Wall time, and the CPU time the process spent meanwhile (which a loaded
        // machine inflates less).
        const cpu = process.cpuUsage();
        const start = process.hrtime.bigint();
        const first = ring.lookup(keys[0]);
        const firstLookupNs = Number(process.hrtime.bigint() - start);
        const { user, system } = process.cpuUsage(cpu);
        const state = ring.status();
        if (state.destroyed) {
          status = 503;
          body = { pid: process.pid, destroyed: true, generation: state.generation };
        } else {
          const answers = keys.map((key) => ring.lookup(key)).map((n) => [n.name, n.address]);
          const snapshot = ring.snapshot();
          body = {
            pid: process.pid,
            generation: state.generation,
            generationAfter: snapshot.generation,
            fingerprint: state.fingerprint,
            firstLookupNs,
            firstLookupCpuUs: user + system,
            firstIsCached: first === ring.lookup(keys[0]),
            answers,
            ids: [...ring.lookupIds(keys)],
            idsOneByOne: keys.map((key) => ring.lookupId(key)),
            nodes: Object.fromEntries(snapshot.nodes.map((n) => [n.id, [n.name, n.address]])),
          };
        }
      } catch (error) {
        if (!(error instanceof shmring.ShmringError)) throw error;
        status = 503;
        body = { pid: process.pid, error: error.code, message: error.message };
      }
      const text = JSON.stringify(body);
      response.writeHead(status, { 'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text), Connection: 'close' });
      response.end(text);
    });
  });
  server.listen(0, '127.0.0.1');

  // GET /lease?key=K&mode=M: a request under a lease of K on the ring
  // SHMRING_TEST_LEASE_RING, which holds it across an await and ends as MODE says:
  // `return` and `reject` through withLease() with an async callback, `throw` through
  // withLease() with a callback that throws, `finally` and `finally-throw` through
  // acquire() and try/finally. 200 with the node's name, or 500 with the error.
  const later = () => new Promise((resolve) => setTimeout(resolve, 2));
  const modes = {
    return: (key) => leaseRing.withLease(key, async (node) => { await later(); return node.name; }),
    reject: (key) => leaseRing.withLease(key, async () => {
      await later();
      throw new Error('the backend failed');
    }),
    throw: (key) => leaseRing.withLease(key, () => { throw new Error('the request is bad'); }),
    finally: async (key) => {
      const lease = leaseRing.acquire(key);
      try {
        await later();
        return lease.node.name;
      } finally {
        lease.release();
      }
    },
    'finally-throw': async (key) => {
      const lease = leaseRing.acquire(key);
      try {
        await later();
        throw new Error('the backend failed');
      } finally {
        lease.release();
      }
    },
  };
  async function serveLease(request, response) {
    const query = new URL(request.url, 'http://localhost').searchParams;
    let status = 200;
    let body;
    try {
      if (leaseRing === null) {
        leaseRing = new shmring.Ring(process.env.SHMRING_TEST_LEASE_RING,
          { directory: process.env.SHMRING_TEST_DIR });
      }
      body = { pid: process.pid, node: await modes[query.get('mode')](query.get('key')) };
    } catch (error) {
      status = 500;
      body = { pid: process.pid, error: error.message };
    }
    const text = JSON.stringify(body);
    response.writeHead(status, { 'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text), Connection: 'close' });
    response.end(text);
  }
}
