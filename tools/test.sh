#!/usr/bin/env bash
# Installs what is missing, then builds and tests shmring in every configuration
# (warnings are errors in each):
#   1. gcc: the whole test suite with the language bindings and the servers they run
#      in, then ringctl and a reader under valgrind memcheck;
#   2. clang with AddressSanitizer and UndefinedBehaviorSanitizer: the whole suite;
#   3. clang with ThreadSanitizer: the concurrency tests;
#   4. clang with libFuzzer: each fuzz target for a bounded time;
#   5. gcc without sync (SHMRING_SYNC=OFF), where pkg-config cannot see libcurl,
#      libsystemd or OpenSSL: the libraries and ringctl build without them.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
shmring_install_deps

jobs=$(nproc)
# The tests that run threads sharing one reader handle, for the ThreadSanitizer build.
SHMRING_CONCURRENCY_TESTS="^(check_reader|check_stress)$"

run_build() {
    local dir=$1
    shift
    echo "== $dir: configure and build"
    cmake -S . -B "$dir" -DSHMRING_WERROR=ON -DSHMRING_REQUIRE_LIBMEMCACHED=ON \
        -DSHMRING_REQUIRE_SYNC_TESTS=ON "$@" >/dev/null
    cmake --build "$dir" -j "$jobs"
    echo "== $dir: tests"
    ctest --test-dir "$dir" --output-on-failure -j "$jobs"
}

# The bindings (Python, LuaJIT, PHP) and their real-server tests run in this build;
# the sanitizer builds leave them out (an interpreter would need the sanitizer's
# runtime preloaded).
# This build also checks each library's exported symbols and ABI against the baseline
# in lib/abi/ (abidiff), and runs the peer algorithms against the real nginx,
# nutcracker and memcached: required here, so that a missing peer fails the suite
# instead of skipping those tests. It also builds the manual in docs/ with warnings as
# errors, and builds the packages (Debian's, the rock, the PECL archive),
# installs the Debian packages system-wide, uses them and purges them (ctest -L
# packages).
run_build build-gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHMRING_REQUIRE_BINDINGS=ON -DSHMRING_ABI_CHECK=ON -DSHMRING_REQUIRE_PEERS=ON \
    -DSHMRING_DOCS=ON -DSHMRING_PACKAGE_TESTS=ON
echo "== build-gcc: valgrind memcheck"
tools/valgrind-check.sh build-gcc
# Sanitizer reports name functions and lines through llvm-14's symbolizer (deps.sh
# installs it; Debian names it with its version).
symbolizer=external_symbolizer_path=/usr/bin/llvm-symbolizer-14
ASAN_OPTIONS="detect_leaks=1 $symbolizer" UBSAN_OPTIONS="print_stacktrace=1 $symbolizer" \
    run_build build-sanitize -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
    -DSHMRING_SANITIZE=ON

# ---- ThreadSanitizer: the concurrency tests (threads sharing one handle while
# versions are published).
echo "== build-tsan: configure and build"
cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHMRING_WERROR=ON -DSHMRING_TSAN=ON -DSHMRING_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-tsan -j "$jobs"
echo "== build-tsan: concurrency tests"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $symbolizer" \
    ctest --test-dir build-tsan -R "$SHMRING_CONCURRENCY_TESTS" --output-on-failure -j "$jobs"

# ---- Fuzzing: each libFuzzer target runs for SHMRING_FUZZ_SECONDS (default 60) from
# the seed corpus in tests/fuzz/corpus, which it only reads. All of them at once, one
# ctest job a test whatever the cores: each run is bounded by time, and at -j "$jobs"
# the third target started only once the first two were done (123 s for three 60 s
# runs on two cores); sharing the cores, each target gets less processor time.
echo "== build-fuzz: configure and build the fuzz targets"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHMRING_WERROR=ON -DSHMRING_FUZZ=ON -DSHMRING_SANITIZE=ON \
    -DSHMRING_BUILD_EXAMPLES=OFF -DSHMRING_FUZZ_SECONDS="${SHMRING_FUZZ_SECONDS:-60}" \
    >/dev/null
cmake --build build-fuzz -j "$jobs" --target shmring_fuzz
echo "== build-fuzz: fuzz tests"
fuzz_jobs=$(ctest --test-dir build-fuzz -L fuzz -N | grep -c '^ *Test *#')
ctest --test-dir build-fuzz -L fuzz --output-on-failure -j "$fuzz_jobs"

# ---- Without sync: configure and build the libraries and ringctl where pkg-config
# finds every .pc file but libcurl's, libsystemd's and OpenSSL's (a PKG_CONFIG_LIBDIR of
# links to the others), so that any pkg_check_modules() of one fails the
# configuration (with SHMRING_SYNC=ON it does); ringctl then says it has no sync.
echo "== build-nosync: configure and build without libcurl, libsystemd and OpenSSL"
hidden_pc=$(mktemp -d)
trap 'rm -rf "$hidden_pc"' EXIT
IFS=: read -ra pc_dirs <<<"$(pkg-config --variable pc_path pkg-config)"
for dir in "${pc_dirs[@]}"; do
    for pc in "$dir"/*.pc; do
        case $(basename "$pc") in
        libcurl.pc | libsystemd.pc | openssl.pc | libssl.pc | libcrypto.pc) ;;
        *) [[ -e $pc && ! -e $hidden_pc/$(basename "$pc") ]] && ln -s "$pc" "$hidden_pc/" ;;
        esac
    done
done
if PKG_CONFIG_LIBDIR=$hidden_pc pkg-config --exists libcurl || \
    PKG_CONFIG_LIBDIR=$hidden_pc pkg-config --exists libsystemd || \
    PKG_CONFIG_LIBDIR=$hidden_pc pkg-config --exists openssl; then
    echo "build-nosync: pkg-config still finds sync's libraries" >&2
    exit 1
fi
PKG_CONFIG_LIBDIR=$hidden_pc PKG_CONFIG_PATH= cmake -S . -B build-nosync \
    -DCMAKE_C_COMPILER=gcc -DSHMRING_WERROR=ON -DSHMRING_SYNC=OFF -DBUILD_TESTING=OFF \
    -DSHMRING_MAN=OFF -DSHMRING_BUILD_EXAMPLES=OFF -DSHMRING_BUILD_BINDINGS=OFF >/dev/null
cmake --build build-nosync -j "$jobs" --target shmring shmringctl ringctl
[[ ! -e build-nosync/tools/ringctl-sync ]]
if answer=$(build-nosync/tools/ringctl sync --file /dev/null 2>&1) ||
    [[ $answer != "ringctl: error: this ringctl was built without sync (SHMRING_SYNC=OFF)" ]]; then
    echo "build-nosync: ringctl sync: '$answer'" >&2
    exit 1
fi

echo "== all tests passed"
