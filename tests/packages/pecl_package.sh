#!/bin/bash
# The PECL package of the PHP extension, as PHP users build and install it: `pecl
# package` in a copy of bindings/php makes shmring-VERSION.tgz, and `pecl install
# ./shmring-VERSION.tgz` builds it offline against a libshmring installed with cmake
# --install into a fresh prefix (-D 'with-shmring="PREFIX"'). The installed
# shmring.so, loaded by an ini file as `extension=shmring.so` loads it, answers 200
# keys as ringctl lookup does; `pecl uninstall` removes it.
#
# pecl installs an extension into PHP's own extension directory whatever its
# configuration says (its --installroot fails after installing one: PEAR 1.10.13,
# Install.php:751), so this test installs there for a moment: it refuses to run
# where a shmring.so is already there (Debian's php-shmring, say), and uninstalls at
# exit. Its PEAR registry is a private one (pecl -c), and no ini file of the system
# enables the extension meanwhile. ctest runs deb_install, the one other test that
# installs there, alone.
# Usage: pecl_package.sh SRC BUILD CMAKE RINGCTL VERSION
set -u
src=$1 build=$2 cmake=$3 ringctl=$4 version=$5
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
work=$(mktemp -d /tmp/shmring-pecl.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/copy_tree.sh"

"$cmake" --install "$build" --prefix "$work/prefix" >/dev/null || exit 1
copy_tree "$src" "$work/src" || exit 1
cd "$work/src/bindings/php" || exit 1
if ! pecl package >"$work/package.log" 2>&1 || [[ ! -f shmring-$version.tgz ]]; then
    cat "$work/package.log" >&2
    echo "FAIL: pecl package made no shmring-$version.tgz" >&2
    exit 1
fi
# Every file of the extension's build is in the archive.
listing=$(tar -tzf "shmring-$version.tgz")
for file in config.m4 shmring.c php_shmring.h shmring_arginfo.h; do
    grep -qx "shmring-$version/$file" <<<"$listing" || fail "$file is not in the archive"
done

extension_dir=$(php-config --extension-dir)
so=$extension_dir/shmring.so
if [[ -e $so ]]; then
    echo "FAIL: $so is already installed (php-shmring?): pecl install would replace it" >&2
    exit 1
fi
# A private PEAR configuration: its registry and directories under $work.
pearrc=$work/pearrc
pecl config-create "$work/pear" "$pearrc" >/dev/null || exit 1
# PEAR unpacks, builds and caches in /tmp/pear, removed at exit if it made it.
[[ -e /tmp/pear ]] && made_tmp_pear=0 || made_tmp_pear=1
uninstall() {
    if [[ -e $so ]]; then
        pecl -c "$pearrc" uninstall shmring >"$work/uninstall.log" 2>&1 ||
            fail "pecl uninstall shmring: $(tail -n 3 "$work/uninstall.log")"
    fi
    ((made_tmp_pear)) && rm -rf /tmp/pear
    rm -rf "$work"
}
trap uninstall EXIT
if ! pecl -c "$pearrc" install -D "with-shmring=\"$work/prefix\"" "./shmring-$version.tgz" \
    >"$work/install.log" 2>&1; then
    tail -n 30 "$work/install.log" >&2
    echo "FAIL: pecl install ./shmring-$version.tgz" >&2
    exit 1
fi
[[ -f $so ]] || { echo "FAIL: pecl installed no $so" >&2; exit 1; }

export SHMRING_DIR=$work/rings
mkdir "$SHMRING_DIR"
cat >"$work/nodes.json" <<'JSON'
{"nodes": [{"name": "cache-a", "address": "10.0.1.1:11211", "weight": 2},
           {"name": "cache-b", "address": "10.0.1.2:11211"},
           {"name": "cache-c", "address": "10.0.1.3:11211"}]}
JSON
"$ringctl" -r cache load "$work/nodes.json" >/dev/null || fail "ringctl load"
seq -f 'user:%g' 1 200 >"$work/keys"
expected=$(xargs "$ringctl" -r cache lookup <"$work/keys")
# The ini file as a user writes it, in a scan directory of its own (in place of the
# system's, whose conf.d may enable Debian's php-shmring); the library is found in
# the prefix it was built against, which configure recorded as its run path.
mkdir "$work/conf.d"
echo "extension=shmring.so" >"$work/conf.d/20-shmring.ini"
php_run() {
    env -i PATH=/usr/bin:/bin "PHP_INI_SCAN_DIR=$work/conf.d" php "$@"
}
php_run -m | grep -qx shmring || fail "php -m does not list shmring"
[[ $(php_run -r 'echo phpversion("shmring");') == "$version" ]] ||
    fail "phpversion('shmring') is not $version"
got=$(php_run -r '
$ring = new Shmring\Ring("cache", $argv[1]);
foreach (file($argv[2], FILE_IGNORE_NEW_LINES) as $key) {
    $node = $ring->lookup($key);
    echo $key, "\t", $node->name, "\t", $node->address, "\n";
}' "$SHMRING_DIR" "$work/keys")
[[ -n $expected && $got == "$expected" ]] ||
    fail "the PECL extension answers differently from ringctl lookup: $(diff <(echo "$expected") <(echo "$got") | head -3)"
uninstall
trap - EXIT
[[ ! -e $so ]] || fail "pecl uninstall left $so"
((failures == 0)) || exit 1
echo "pecl package: shmring-$version.tgz; pecl install: built, loaded, 200 keys as ringctl lookup; uninstalled"
