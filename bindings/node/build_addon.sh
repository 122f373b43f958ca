#!/bin/sh
# Builds the addon the way `npm install` does (scripts/install.js: node-gyp rebuild,
# offline, against the running Node's headers) in a copy of the package's files, so
# that the checkout stays clean. ctest's tests and bench.js require that copy.
#
# Usage: build_addon.sh SOURCE_DIR PACKAGE_DIR PKG_CONFIG_DIR NODE_GYP [CFLAGS]
# (CFLAGS: added to the compiler's flags, as the Makefile node-gyp writes reads them.)
set -eu
source_dir=$1 package_dir=$2 pkg_config_dir=$3 node_gyp=$4
export CFLAGS="${5:-}"

mkdir -p "$package_dir/src" "$package_dir/scripts"
for file in package.json index.js index.d.ts binding.gyp src/shmring.c \
            scripts/install.js README.md; do
    cp "$source_dir/$file" "$package_dir/$file"
done
cd "$package_dir"
PKG_CONFIG_PATH=$pkg_config_dir npm_config_node_gyp=$node_gyp node scripts/install.js
