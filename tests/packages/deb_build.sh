#!/bin/sh
# Builds shmring's Debian packages from a copy of the source tree, as a user would:
# `dpkg-buildpackage -us -uc -b` (its build dependencies checked, tests left to
# tools/test.sh), then lintian, which must report no error; its warnings are
# printed. Every new exported symbol must be in debian/*.symbols (dpkg-gensymbols at
# its strictest check level). The .deb files are left in OUT for deb_install.sh.
# Usage: deb_build.sh SRC OUT
set -eu
src=$1 out=$2
. "$(dirname "$0")/copy_tree.sh"
rm -rf "$out"
copy_tree "$src" "$out/shmring"
cd "$out/shmring"
if ! DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2" DPKG_GENSYMBOLS_CHECK_LEVEL=4 \
    dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1; then
    tail -n 60 "$out/build.log" >&2
    echo "FAIL: dpkg-buildpackage (log: $out/build.log)" >&2
    exit 1
fi
cd "$out"
ls ./*.deb
# Workers link libshmring and publishers libshmringctl: neither may pull in what only
# ringctl's sync helper needs.
for deb in libshmring0_*.deb libshmringctl0_*.deb; do
    depends=$(dpkg-deb -f "$deb" Depends)
    case $depends in
    *libcurl* | *libsystemd* | *libssl*)
        echo "FAIL: $deb depends on sync's libraries: $depends" >&2
        exit 1
        ;;
    esac
done
# --fail-on error: warnings are reported, not fatal. Lintian refuses nothing for
# running as root, but says so once; that line is no finding.
status=0
lintian --fail-on error --tag-display-limit 0 ./*.changes >lintian.log 2>&1 || status=$?
grep -v "^running with root privileges" lintian.log || true
if [ "$status" -ne 0 ]; then
    echo "FAIL: lintian found errors (exit $status)" >&2
    exit 1
fi
echo "packages built; lintian: $(grep -c '^E:' lintian.log) errors, $(grep -c '^W:' lintian.log) warnings"
