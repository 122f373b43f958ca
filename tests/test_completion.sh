#!/bin/bash
# Sources ringctl's bash completion and checks what it offers for commands, options,
# option values, ring names and node names, against real rings that the built
# ringctl creates in a private ring directory (removed at exit, even on failure).
#
# Usage: test_completion.sh RINGCTL COMPLETION_SCRIPT
set -u
ringctl=$1
completion=$2
failures=0

directory=$(mktemp -d /tmp/shmring-completion.XXXXXX) || exit 1
trap 'rm -rf "$directory"' EXIT
chmod 755 "$directory"
unset SHMRING_DIR SHMRING_RING

make_ring() {
    "$ringctl" --dir "$directory" -r "$1" init >/dev/null || exit 1
}
make_ring cache
make_ring sessions
for node in cache-a cache-b "node with space"; do
    "$ringctl" --dir "$directory" -r cache add "$node" 10.0.0.1:11211 >/dev/null || exit 1
done
"$ringctl" --dir "$directory" -r sessions add s-1 10.0.0.9:11211 >/dev/null || exit 1
# Entries that are not rings: a file with a ring's prefix, and other names.
touch "$directory/shmring.not-a-directory" "$directory/unrelated"

# shellcheck source=../tools/completion/ringctl.bash
source "$completion"

# Completes the words given (the last one is being typed) and checks that the
# candidates, sorted and joined by spaces, equal the expected string.
expect() {
    local expected=$1
    shift
    COMP_WORDS=("$ringctl" "$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _ringctl
    local got
    got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' ')
    got=${got% }
    if [[ $got != "$expected" ]]; then
        echo "FAIL: ringctl $* -> '$got', expected '$expected'" >&2
        failures=$((failures + 1))
    fi
}

# Commands.
expect "add board check destroy down dump help import init list load lookup metrics readers remove show sync up weight" ""
expect "readers remove" re
expect "metrics" --dir "$directory" -r cache m
# Options: the global ones and the command's own.
expect "--all --dir --help --json --owner --ring --version" metrics --
expect "--wait --weight" add n 10.0.0.1:1 --w
expect "--hash-key --help" add n 10.0.0.1:1 --h
expect "" add n 10.0.0.1:1 --hash-key ""
expect "--max-ring-size --min-reader --min-ring-size --mode" init --m
expect "--dry-run" -r cache down --dr
expect "--dir --help --json --owner --ring --stdin --version -V -h -n -r -z" lookup -
# Option values.
expect "dalli envoy-maglev envoy-ring groupcache haproxy hashring jump ketama libketama maglev nginx rendezvous ring spymemcached twemproxy uhashring" init --algorithm ""
expect "envoy-maglev envoy-ring" init --algorithm e
expect "md5 murmur murmur2 murmur3 murmur3_128 murmur3_32" init --hash m
expect "jump" init --algorithm j
expect "0600 0604 0640 0644" init --mode 06
# Ring names, from the ring directory (--dir, else $SHMRING_DIR).
expect "cache sessions" --dir "$directory" -r ""
expect "sessions" --dir "$directory" show --ring s
SHMRING_DIR=$directory expect "cache" -r c
# --dir=DIR and --ring=RING, which bash splits at the '='.
expect "cache sessions" --dir = "$directory" -r ""
expect "sessions" --dir = "$directory" --ring = s
expect "cache sessions" --dir "$directory" --ring =
expect "dalli envoy-maglev envoy-ring groupcache haproxy hashring jump ketama libketama maglev nginx rendezvous ring spymemcached twemproxy uhashring" init --algorithm = ""
# Node names of the chosen ring, from ringctl dump (a name with spaces quoted).
expect "cache-a cache-b node\\ with\\ space" --dir "$directory" -r cache down ""
expect "cache-a cache-b" --dir "$directory" -r cache weight cache-
expect "cache-a cache-b" --dir = "$directory" --ring = cache down cache-
expect "s-1" --dir "$directory" remove -r sessions ""
SHMRING_DIR=$directory SHMRING_RING=sessions expect "s-1" up ""
# Only the first argument of a node command is a node; add's NAME is new.
expect "" --dir "$directory" -r cache weight cache-a ""
expect "" --dir "$directory" -r cache add ""
# import: a format, then a file; --upstream, --pool and --backend take a name.
expect "haproxy libketama nginx twemproxy" import ""
expect "twemproxy" import t
# board: the groups, and none (which removes the board).
expect "none" board non
expect "$directory/unrelated" import nginx "$directory/unr"
expect "" import nginx --upstream ""
expect "--backend --dir --help --json --pool --ring --upstream --version" import nginx f --
# A ring that does not exist has no nodes to offer.
expect "" --dir "$directory" -r missing down ""

if ((failures > 0)); then
    echo "$failures completion checks failed" >&2
    exit 1
fi
echo "all completion checks passed"
