#!/bin/bash
# Every package of the tree carries the project's version, CMake's project(VERSION),
# which the libraries, the .pc files and the Python package take from the build: the
# Debian changelog's top entry, the rockspec (its file name, its version and the
# library soname it loads), opm's dist.ini and the Lua module's version line that opm
# reads, the PECL package.xml, the npm package.json and the gem's version.rb, which are
# written by hand. A
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

# opm's dist.ini: its version, and the one opm itself reads from the main module (the
# first line matching opm's pattern whose value has a digit, cleaned as opm cleans
# it); its name, abstract, license and repository, the rockspec's.
dist=$src/bindings/lua/dist.ini
field() { sed -n "s/^$1 = //p" "$dist"; }
[[ $(field version) == "$version" ]] || fail "bindings/lua/dist.ini: version '$(field version)', CMake: $version"
main=$(field main_module)
[[ $main == lua/shmring.lua && $(field lib_dir) == lua ]] ||
    fail "bindings/lua/dist.ini: main_module '$main' is not lua/shmring.lua under lib_dir lua"
opm_version=$(perl -ne 'if (/\b(?:_?VERSION|version)\s*=\s*(\S+)/) {
    (my $v = $1) =~ s/[;,\x27"{}()<>]|\[=*\[|\]=*\]|\s+$//g;
    if ($v =~ /\d/) { print $v; exit } }' "$src/bindings/lua/shmring.lua")
[[ $opm_version == "$version" ]] ||
    fail "opm reads version '$opm_version' from bindings/lua/shmring.lua, CMake: $version"
if [[ -f $src/$rockspec ]]; then
    summary=$(sed -n 's/^ *summary = "\(.*\)",$/\1/p' "$src/$rockspec")
    [[ $(field abstract) == "$summary" ]] ||
        fail "bindings/lua/dist.ini: abstract '$(field abstract)', rockspec summary '$summary'"
    grep -q '^ *license = "MIT",$' "$src/$rockspec" && [[ $(field license) == mit ]] ||
        fail "bindings/lua/dist.ini: license '$(field license)', not the rockspec's MIT as mit"
    url=$(sed -n 's|^ *url = "git+\(.*\)\.git",$|\1|p' "$src/$rockspec")
    [[ $(field repo_link) == "$url" ]] ||
        fail "bindings/lua/dist.ini: repo_link '$(field repo_link)', rockspec source '$url'"
fi
[[ $(field name) == shmring && $(field is_original) == yes ]] ||
    fail "bindings/lua/dist.ini: name '$(field name)', is_original '$(field is_original)'"

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
echo "debian/changelog, $rockspec, dist.ini (and opm's reading of shmring.lua), package.xml, package.json and version.rb: $version"
