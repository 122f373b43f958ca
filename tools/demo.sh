#!/usr/bin/env bash
# Installs what is missing, builds shmring, and shows it working:
#   1. one node set published with each placement algorithm, and keys routed;
#   2. a prefork worker pool and a multi-threaded worker following a live
#      `ringctl add` and `ringctl remove`.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
shmring_install_deps

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
ringctl=build/tools/ringctl
rings=()
workers=()
cleanup() {
    # A step that failed half-way must not leave the workers running.
    for pid in "${workers[@]}"; do kill "$pid" 2>/dev/null || true; done
    for r in "${rings[@]}"; do "$ringctl" -r "$r" destroy >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

echo "== 1. The same node set with each placement algorithm"
for algorithm in ring maglev ketama; do
    ring="demo-$algorithm-$$"
    rings+=("$ring")
    hash=xxh3
    [ "$algorithm" = ketama ] && hash=md5
    step "$ringctl" -r "$ring" init --algorithm "$algorithm" --hash "$hash"
    step "$ringctl" -r "$ring" load examples/nodes.json
    step "$ringctl" -r "$ring" show
    step "$ringctl" -r "$ring" lookup user:1 user:2 user:3 user:4
done

echo
echo "== 2. Workers follow live changes"
ring="demo-live-$$"
rings+=("$ring")
step "$ringctl" -r "$ring" load examples/nodes.json
echo
echo "Starting 3 prefork workers and a 2-thread worker for 6 seconds;"
echo "cache-d is added after 2 s and cache-a removed after 4 s."
build/examples/prefork_pool "$ring" 3 6 &
pool=$!
build/examples/threaded_worker "$ring" 2 6 &
threads=$!
workers=("$pool" "$threads")
sleep 2.2
step "$ringctl" -r "$ring" add cache-d 10.0.1.4:11211
sleep 2
step "$ringctl" -r "$ring" remove cache-a
wait "$pool" "$threads"
workers=()
step "$ringctl" -r "$ring" show
echo
echo "== demo finished"
