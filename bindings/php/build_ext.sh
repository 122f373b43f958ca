#!/bin/sh
# Builds shmring.so out of tree, the PHP way: build_ext.sh SRCDIR EXTDIR PHPIZE
# PHP_CONFIG INCLUDE_DIRS LIBRARY_DIR CFLAGS, where INCLUDE_DIRS is a colon-separated
# list (the headers, and the build's generated shmring_version.h). Logs go to
# EXTDIR/*.log and are printed on failure. The module gets no run path into the build tree (it would follow it
# into an installation): the tests find the in-tree libshmring with LD_LIBRARY_PATH.
set -eu
src=$1 ext=$2 phpize=$3 php_config=$4 include_dirs=$5 library_dir=$6 cflags=$7
cppflags=
old_ifs=$IFS
IFS=:
for dir in $include_dirs; do
    cppflags="$cppflags -I$dir"
done
IFS=$old_ifs
mkdir -p "$ext"
for f in config.m4 shmring.c php_shmring.h shmring_arginfo.h shmring.stub.php; do
    cp -p "$src/$f" "$ext/$f"
done
cd "$ext"
run() {
    log=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        exit 1
    fi
}
run phpize.log "$phpize"
# Flags from the environment come first (a Debian package build's hardening flags:
# dpkg-buildflags' relro/now and fortify), then the build's own.
run configure.log ./configure --with-php-config="$php_config" --with-shmring \
    CPPFLAGS="${CPPFLAGS:+$CPPFLAGS }${cppflags# }" \
    LDFLAGS="${LDFLAGS:+$LDFLAGS }-L$library_dir" \
    CFLAGS="${CFLAGS:+$CFLAGS }$cflags"
# configure may have changed the flags: rebuild everything (one source file).
run clean.log make clean
run make.log make
