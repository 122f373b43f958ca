#!/bin/sh
# cmake --install puts shmring.so where PHP loads it from, and nowhere else: under
# PHP's prefix into PHP's extension directory (here inside a DESTDIR), under any other
# prefix not at all.
#
# Usage: cmake_install.sh BUILD_DIR PHP_PREFIX PHP_EXTENSION_DIR
set -eu
build=$1 php_prefix=$2 extension_dir=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/shmring-php-install.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

DESTDIR="$work/dest" cmake --install "$build" --prefix "$php_prefix" >"$work/php-prefix.log"
found=$(cd "$work/dest" && find . -name shmring.so | sort)
echo "--prefix $php_prefix: ${found:-no shmring.so}"
[ "$found" = ".$extension_dir/shmring.so" ] || {
    echo "expected exactly .$extension_dir/shmring.so" >&2; exit 1; }

cmake --install "$build" --prefix "$work/other" >"$work/other-prefix.log"
found=$(find "$work/other" -name shmring.so | sort)
echo "--prefix $work/other: ${found:-no shmring.so}"
[ -z "$found" ] || { echo "a shmring.so that PHP does not read" >&2; exit 1; }
grep -F "Not installing shmring.so: $work/other is not PHP's prefix ($php_prefix)" \
    "$work/other-prefix.log"
