// hashring_owners.js: the server that npm's hashring gives each key, as the
// memcached client or hashring itself is used. Usage:
//
//   node hashring_owners.js SPEC.json < KEYS
//
// SPEC: {"via": "client", "servers": ..., "options": {...}} makes a memcached
// Client(servers, options) (which connects to nothing until a command) and asks its
// HashRing, as Client.prototype.command does for each command ("servers" as the
// client takes them: an array of strings, or an object of server: weight);
// {"via": "hashring", "servers": ..., "algorithm": ..., "options": {...}} makes a
// HashRing(servers, algorithm, options) directly.
//
// Each line of KEYS is a key in hexadecimal: its UTF-8, given as a string, or, after
// a "b", bytes given as a Buffer. Each output line is the server; for a Buffer, a
// tab and the hexadecimal of the UTF-8 the ring hashed too (key + '').
'use strict';

const fs = require('fs');

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let get;
if (spec.via === 'client') {
  const Memcached = require('memcached');
  const client = new Memcached(spec.servers, spec.options || {});
  // Client.prototype.command: one server needs no ring.
  get = (key) => (client.servers.length === 1 ? client.servers[0] : client.HashRing.get(key));
} else {
  const HashRing = require('hashring');
  const ring = new HashRing(spec.servers, spec.algorithm, spec.options || {});
  get = (key) => ring.get(key);
}

const lines = fs.readFileSync(0, 'latin1').split('\n');
lines.pop();
const out = [];
for (const line of lines) {
  if (line.startsWith('b')) {
    const key = Buffer.from(line.slice(1), 'hex');
    out.push(get(key) + '\t' + Buffer.from(key + '', 'utf8').toString('hex'));
  } else {
    out.push(get(Buffer.from(line, 'hex').toString('utf8')));
  }
}
fs.writeSync(1, out.join('\n') + '\n');
process.exit(0);
