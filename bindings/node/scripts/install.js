'use strict';
// `npm install`'s build step: node-gyp rebuild against the headers of the Node.js
// that runs it. When they are installed next to it (PREFIX/include/node, as the
// nodesource and Debian packages put them) and are of this very version, node-gyp
// is told so with --nodedir, so that it builds offline instead of downloading
// headers from nodejs.org (Debian's own node tells node-gyp this by itself; the
// nodesource build does not). An npm `nodedir` setting, or headers of another
// version, leave node-gyp to its own ways.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function localNodeDir() {
  const prefix = path.dirname(path.dirname(process.execPath));
  try {
    const header = fs.readFileSync(path.join(prefix, 'include', 'node', 'node_version.h'),
      'utf8');
    const part = (name) => header.match(new RegExp(`#define NODE_${name}_VERSION (\\d+)`))[1];
    const version = `v${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
    return version === process.version ? prefix : null;
  } catch {
    return null;
  }
}

// npm names the node-gyp it bundles in npm_config_node_gyp.
const nodeGyp = process.env.npm_config_node_gyp ||
  require.resolve('node-gyp/bin/node-gyp.js', {
    paths: [path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm')],
  });
const args = [nodeGyp, 'rebuild'];
const nodeDir = process.env.npm_config_nodedir ? null : localNodeDir();
if (nodeDir) args.push(`--nodedir=${nodeDir}`);
const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(result.status === null ? 1 : result.status);
