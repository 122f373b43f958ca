#!/usr/bin/env bash
# Runs ringctl (every command) and a multi-threaded reader under valgrind memcheck:
# any memory error or leak fails. Usage: tools/valgrind-check.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:?usage: $0 BUILD_DIR}")
# examples/nodes.json is read relative to the source tree, wherever this is run from.
cd "$(dirname "$0")/.."
ring="valgrind-check-$$"
vg=(valgrind --quiet --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect)
ringctl=("${vg[@]}" "$build/tools/ringctl" -r "$ring")
cleanup() { "$build/tools/ringctl" -r "$ring" destroy >/dev/null 2>&1 || true; }
trap cleanup EXIT

run() { echo "+ ringctl $*"; "${ringctl[@]}" "$@" >/dev/null; }
run init --algorithm maglev --mode 0640
run load examples/nodes.json
run add cache-d 10.0.1.4:11211 --weight 3
run weight cache-d 2
run down cache-b
run up cache-b
run remove cache-a --dry-run
run show
run show --json
run lookup -n 2 user:1 user:2
printf 'user:1\nuser:2\n' | "${ringctl[@]}" lookup --stdin >/dev/null
run dump
run list
"$build/tools/ringctl" -r "$ring" dump | "${ringctl[@]}" load - >/dev/null
# Bad input must fail cleanly under memcheck too (exit 1 or 2, never 99).
for bad in "add cache-a x:1" "remove nope" "weight cache-b 0" "load /nonexistent"; do
    set +e
    "${ringctl[@]}" $bad 2>/dev/null
    status=$?
    set -e
    if [ "$status" -ne 1 ] && [ "$status" -ne 2 ]; then
        echo "ringctl $bad: exit $status under valgrind" >&2
        exit 1
    fi
done

echo "+ threaded_worker under valgrind while the ring changes"
"${vg[@]}" "$build/examples/threaded_worker" "$ring" 2 3 >/dev/null &
worker=$!
sleep 1.5
"$build/tools/ringctl" -r "$ring" add cache-e 10.0.1.5:11211 >/dev/null
sleep 0.5
"$build/tools/ringctl" -r "$ring" remove cache-d >/dev/null
wait "$worker"
run destroy
echo "valgrind: ringctl and a reader ran clean"
