#!/bin/sh
# The npm package the way users install it, offline: libshmring installed under a
# temporary prefix, `npm pack` of a copy of bindings/node, then `npm install
# ./shmring-VERSION.tgz` into an empty project, with a HOME of its own (so an empty
# node-gyp cache: the build must use the installed Node's headers, nodejs.org being
# out of reach), then the node --test suite against that installed package, which
# finds libshmring through the run path the build recorded. VERSION must be CMake's
# project version, which ctest passes as SHMRING_VERSION.
#
# Usage: SHMRING_VERSION=X.Y.Z SHMRING_RINGCTL=... npm_install.sh BUILD_DIR SOURCE_DIR
set -eu
build_dir=$1 source_dir=$2

work=$(mktemp -d "${TMPDIR:-/tmp}/shmring-npm.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
pc=$(find "$work/prefix" -name shmring.pc -print -quit)
test -n "$pc" || { echo "no shmring.pc installed" >&2; exit 1; }

mkdir "$work/src" "$work/app" "$work/home"
cp -R "$source_dir/package.json" "$source_dir/index.js" "$source_dir/index.d.ts" \
      "$source_dir/binding.gyp" "$source_dir/README.md" "$source_dir/src" \
      "$source_dir/scripts" "$work/src/"
export HOME="$work/home" npm_config_cache="$work/home/.npm" npm_config_update_notifier=false
unset NODE_PATH LD_LIBRARY_PATH npm_config_nodedir

(cd "$work/src" && npm pack --silent --pack-destination "$work") >/dev/null
tarball="$work/shmring-$SHMRING_VERSION.tgz"
test -f "$tarball" || { echo "npm pack made no $tarball:" $(ls "$work") >&2; exit 1; }
# The tarball holds the package and nothing of the build.
tar -tzf "$tarball" | sort > "$work/contents"
printf '%s\n' package/README.md package/binding.gyp package/index.d.ts package/index.js \
    package/package.json package/scripts/install.js package/src/shmring.c > "$work/expected"
diff -u "$work/expected" "$work/contents"

cd "$work/app"
echo '{"name": "app", "version": "1.0.0", "private": true}' > package.json
PKG_CONFIG_PATH=$(dirname "$pc") npm install --no-audit --no-fund --offline \
    "$tarball"
test ! -e "$HOME/.cache/node-gyp" || { echo "node-gyp downloaded headers" >&2; exit 1; }
node -e '
const shmring = require("shmring");
const path = require.resolve("shmring");
if (!path.startsWith(process.cwd() + "/node_modules/shmring/")) throw new Error(path);
if (shmring.version !== process.env.SHMRING_VERSION) throw new Error(shmring.version);
console.log("installed", path, "version", shmring.version);'
NODE_PATH="$work/app/node_modules" node --test "$source_dir/test/ring.test.js" \
    "$source_dir/test/lease.test.js"
