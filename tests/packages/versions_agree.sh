#!/bin/bash
# Every package of the tree carries the project's version, CMake's project(VERSION),
# which the libraries, the .pc files and the Python package take from the build: the
# Debian changelog's top entry, the rockspec (its file name, its version and the
# library soname it loads), the PECL package.xml, the npm package.json and the gem's
# version.rb, which are written by hand. A
# release that changes the version in CMakeLists.txt fails here until each follows.
# Usage: versions_agree.sh SRC VERSION
set -u
src=$1 version=$2
major=${version%%.*}
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

debian=$(dpkg-parsechangelog -l "$src/debian/changelog" -SVersion)
[[ $debian == "$version" ]] || fail "debian/changelog: $debian, CMake: $version"

rockspecs=$(cd "$src/bindings/lua" && ls ./*.rockspec)
rockspec=bindings/lua/shmring-$version-1.rockspec
[[ $rockspecs == "./shmring-$version-1.rockspec" ]] ||
    fail "bindings/lua: rockspecs '$rockspecs', expected only shmring-$version-1.rockspec"
if [[ -f $src/$rockspec ]]; then
    grep -qx "version = \"$version-1\"" "$src/$rockspec" ||
        fail "$rockspec: no line version = \"$version-1\""
    grep -q -- "-DSONAME=libshmring.so.$major " "$src/$rockspec" ||
        fail "$rockspec: the soname it loads is not libshmring.so.$major"
fi

# package.xml's release and API versions.
pecl=$(python3 -c '
import sys, xml.etree.ElementTree as ET
ns = {"p": "http://pear.php.net/dtd/package-2.0"}
version = ET.parse(sys.argv[1]).getroot().find("p:version", ns)
print(version.find("p:release", ns).text, version.find("p:api", ns).text)' \
    "$src/bindings/php/package.xml")
[[ $pecl == "$version $version" ]] ||
    fail "bindings/php/package.xml: release and api '$pecl', CMake: $version"

node=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
    "$src/bindings/node/package.json")
[[ $node == "$version" ]] || fail "bindings/node/package.json: $node, CMake: $version"
grep -qx "  VERSION = \"$version\"" "$src/bindings/ruby/lib/shmring/version.rb" ||
    fail "bindings/ruby/lib/shmring/version.rb: no line VERSION = \"$version\""

((failures == 0)) || exit 1
echo "debian/changelog, $rockspec, package.xml, package.json and version.rb: $version"
