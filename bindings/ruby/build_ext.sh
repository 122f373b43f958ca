#!/bin/sh
# Builds shmring.so out of tree, the Ruby way: build_ext.sh SRCDIR EXTDIR RUBY
# INCLUDE_DIRS LIBRARY_DIR OUTPUT EXTRA_CFLAGS, where INCLUDE_DIRS is a colon-separated
# list (the headers, and the build's generated shmring_version.h). extconf.rb is told
# where they are and not to ask pkg-config, which could find another libshmring
# installed on the machine. Logs go to EXTDIR/*.log and are printed on failure. The
# module gets no run path into the build tree: the tests find the in-tree libshmring
# with LD_LIBRARY_PATH.
set -eu
src=$1 ext=$2 ruby=$3 include_dirs=$4 library_dir=$5 output=$6 cflags=$7
mkdir -p "$ext" "$(dirname "$output")"
cp -p "$src/ext/shmring/shmring.c" "$src/ext/shmring/extconf.rb" "$ext/"
cd "$ext"
run() {
    log=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        test ! -f mkmf.log || cat mkmf.log >&2
        exit 1
    fi
}
run extconf.log env SHMRING_EXTRA_CFLAGS="$cflags" "$ruby" extconf.rb \
    --without-pkg-config --with-shmring-include="$include_dirs" \
    --with-shmring-lib="$library_dir"
# mkmf's Makefile knows nothing of the headers, so an object left from an earlier
# build would outlive a changed header (shmring_version.h after a version bump): the
# one source file is always compiled again.
rm -f ./*.o shmring.so
run make.log make V=1
cp shmring.so "$output"
