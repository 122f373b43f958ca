#!/usr/bin/env bash
# Installs what is missing, builds shmring twice and runs the whole test suite on
# each build:
#   1. gcc, warnings as errors;
#   2. clang with AddressSanitizer and UndefinedBehaviorSanitizer, warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
shmring_install_deps

jobs=$(nproc)

run_build() {
    local dir=$1
    shift
    echo "== $dir: configure and build"
    cmake -S . -B "$dir" -DSHMRING_WERROR=ON "$@" >/dev/null
    cmake --build "$dir" -j "$jobs"
    echo "== $dir: tests"
    ctest --test-dir "$dir" --output-on-failure -j "$jobs"
}

run_build build-gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_build build-sanitize -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
    -DSHMRING_SANITIZE=ON
echo "== all tests passed"
