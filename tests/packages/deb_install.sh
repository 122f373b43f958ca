#!/bin/bash
# Installs the Debian packages that deb_build.sh left in DIR, system-wide, with
# `apt-get install ./*.deb`, and uses each as its users would, with no environment
# variable set (env -i, a plain PATH): a C worker compiled against libshmring-dev
# through pkg-config, the Python module from /usr/bin/python3, the Lua module from
# luajit and the PHP extension, enabled by its package (php -m lists it). Each looks
# up the same keys in a ring that the installed ringctl published, and must answer
# as `ringctl lookup` does. Then the packages are purged, also when a check failed,
# and nothing of theirs may remain: no file they held, no file or link named after
# shmring or ringctl that was not there before, no user shmring that the
# installation created.
#
# It changes the system, so it refuses to run where any of these packages is already
# installed (it would replace and then purge it), and it runs alone (ctest
# RUN_SERIAL): the other tests load the build tree's libraries and modules, and
# must not meet these in the same interpreter.
# Usage: deb_install.sh DIR
set -u
dir=$(cd "$1" && pwd) || exit 1
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
run() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

shopt -s nullglob
debs=("$dir"/*.deb)
((${#debs[@]} == 7)) || { echo "FAIL: expected 7 packages in $dir, found ${#debs[@]}" >&2; exit 1; }
packages=()
for deb in "${debs[@]}"; do
    packages+=("$(dpkg-deb -f "$deb" Package)")
done
for package in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q installed; then
        echo "FAIL: $package is already installed here: this test would replace and" \
             "purge it (remove it first: apt-get purge ${packages[*]})" >&2
        exit 1
    fi
done

# The files and links named after shmring or ringctl in the system's directories.
ours() {
    find /etc /usr /lib /var /opt -xdev \( -iname '*shmring*' -o -iname '*ringctl*' \) \
        -print 2>/dev/null | LC_ALL=C sort
}
before=$(ours)
user_before=$(getent passwd shmring)
ring=pkgtest-$$
work=$(mktemp -d /tmp/shmring-deb.XXXXXX) || exit 1
installed=0

purge() {
    [[ -x /usr/bin/ringctl ]] && run ringctl -r "$ring" destroy >/dev/null 2>&1
    if ((installed)); then
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -q -o DPkg::Lock::Timeout=600 \
            "${packages[@]}" >"$work/purge.log" 2>&1 ||
            { cat "$work/purge.log" >&2; fail "apt-get purge"; }
        installed=0
    fi
    # Debian keeps the system users that packages create; this test does not.
    if [[ -z $user_before ]] && getent passwd shmring >/dev/null; then
        userdel shmring
        getent group shmring >/dev/null && groupdel shmring
    fi
}
trap 'purge; rm -rf "$work"' EXIT

installed=1
if ! (cd "$dir" && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends -o DPkg::Lock::Timeout=600 "${debs[@]/#$dir/.}") \
    >"$work/install.log" 2>&1; then
    cat "$work/install.log" >&2
    fail "apt-get install ./*.deb"
    exit 1
fi

# The ring, published by the installed ringctl, and what ringctl says of 200 keys.
cat >"$work/nodes.json" <<'JSON'
{"nodes": [{"name": "cache-a", "address": "10.0.1.1:11211", "weight": 2},
           {"name": "cache-b", "address": "10.0.1.2:11211"},
           {"name": "cache-c", "address": "10.0.1.3:11211"}]}
JSON
run ringctl -r "$ring" load "$work/nodes.json" >/dev/null || fail "ringctl load"
keys=()
for i in $(seq 1 200); do keys+=("user:$i"); done
expected=$(run ringctl -r "$ring" lookup "${keys[@]}") || fail "ringctl lookup"
[[ $(wc -l <<<"$expected") == 200 ]] || fail "ringctl lookup: '$expected'"
printf '%s\n' "${keys[@]}" >"$work/keys"

check() { # NAME OUTPUT
    if [[ $2 != "$expected" ]]; then
        fail "$1 answers differently from ringctl lookup:"
        diff <(echo "$expected") <(echo "$2") | head -5 >&2
    else
        echo "$1: 200 keys as ringctl lookup"
    fi
}

cat >"$work/worker.c" <<'C'
#include <shmring.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    shmring_t *ring;
    int err = shmring_open(argv[1], &ring);
    if (err != 0) {
        fprintf(stderr, "open: %s\n", shmring_strerror(err));
        return 1;
    }
    char key[256];
    while (fgets(key, sizeof key, stdin)) {
        key[strcspn(key, "\n")] = '\0';
        shmring_node_t node;
        if ((err = shmring_lookup(ring, key, strlen(key), &node)) != 0) {
            fprintf(stderr, "%s: %s\n", key, shmring_strerror(err));
            return 1;
        }
        printf("%s\t%s\t%s\n", key, node.name, node.address);
    }
    shmring_close(ring);
    return 0;
}
C
if run sh -c 'cc -Wall -Werror -o "$1/worker" "$1/worker.c" $(pkg-config --cflags --libs shmring)' \
    _ "$work"; then
    check "C worker (pkg-config shmring)" "$(run "$work/worker" "$ring" <"$work/keys")"
else
    fail "the C worker does not build against libshmring-dev"
fi

check "python3" "$(run /usr/bin/python3 -c '
import sys, shmring
ring = shmring.Ring(sys.argv[1])
for key in open(sys.argv[2]).read().split():
    node = ring.lookup(key)
    print("%s\t%s\t%s" % (key, node.name, node.address))' "$ring" "$work/keys")"

run luajit -e 'require "shmring"' || fail "luajit -e 'require \"shmring\"'"
cat >"$work/lookup.lua" <<'LUA'
local ring = assert(require("shmring").open(arg[1]))
for key in io.lines(arg[2]) do
    local node = assert(ring:lookup(key))
    print(key .. "\t" .. node.name .. "\t" .. node.address)
end
LUA
check "luajit" "$(run luajit "$work/lookup.lua" "$ring" "$work/keys")"

run php -m | grep -qx shmring || fail "php -m does not list shmring"
check "php" "$(run php -r '
$ring = new Shmring\Ring($argv[1]);
foreach (file($argv[2], FILE_IGNORE_NEW_LINES) as $key) {
    $node = $ring->lookup($key);
    echo $key, "\t", $node->name, "\t", $node->address, "\n";
}' "$ring" "$work/keys")"

# Purged, nothing of the packages remains.
held=$(for deb in "${debs[@]}"; do dpkg-deb -c "$deb"; done |
       awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | LC_ALL=C sort -u)
purge
for package in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q .; then
        fail "$package is still known to dpkg after purge"
    fi
done
while read -r file; do
    [[ -e $file || -L $file ]] && fail "left behind after purge: $file"
done <<<"$held"
new=$(comm -13 <(echo "$before") <(ours))
[[ -z $new ]] || fail "left behind after purge: $(tr '\n' ' ' <<<"$new")"
[[ $(getent passwd shmring) == "$user_before" ]] || fail "user shmring changed"

((failures == 0)) || exit 1
echo "installed, used with no environment variables, and purged without a trace"
