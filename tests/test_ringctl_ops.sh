#!/bin/bash
# ringctl's operator commands end to end: `readers` (text and --json), show's readers
# line and `metrics` (checked by promtool, Prometheus' own parser and linter), with
# a real reader process holding a superseded version: a `ringctl lookup --stdin`
# co-process, which keeps its version mapped until its next key. Every step waits
# for the co-process's answer line, never for time. The rings live in a private
# directory, removed at exit even on failure.
#
# Usage: test_ringctl_ops.sh RINGCTL [PROMTOOL]
set -u
ringctl=$1
promtool=${2:-promtool}
failures=0

directory=$(mktemp -d /tmp/shmring-ops.XXXXXX) || exit 1
chmod 755 "$directory"
cleanup() {
    if [[ -n ${READER_PID:-} ]]; then
        exec {READER[1]}>&- 2>/dev/null
        wait "$READER_PID" 2>/dev/null
    fi
    rm -rf "$directory"
}
trap cleanup EXIT
unset SHMRING_DIR SHMRING_RING

rc() { "$ringctl" --dir "$directory" "$@"; }

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# Checks that "$2" equals "$3", naming what is compared ($1).
same() {
    [[ $2 == "$3" ]] || fail "$1: got '$2', expected '$3'"
}

# A JSON value: python3 evaluates expression $2 on the document in $1 (as `d`).
json() {
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

# The lines of metrics text $1 that start with $2.
samples() {
    awk -v prefix="$2" 'index($0, prefix) == 1' <<<"$1"
}

# promtool must accept the exposition without a single complaint.
promtool_accepts() {
    local complaints
    complaints=$("$promtool" check metrics <<<"$2" 2>&1)
    local status=$?
    [[ $status -eq 0 && -z $complaints ]] ||
        fail "$1: promtool check metrics exited $status: $complaints"
}

page=$(getconf PAGESIZE)
whole_pages() { echo $((($1 + page - 1) / page * page)); }

rc -r cache init >/dev/null || exit 1
rc -r cache add a 10.0.0.1:11211 >/dev/null || exit 1
rc -r cache add b 10.0.0.2:11211 >/dev/null || exit 1
rc -r cache down b >/dev/null || exit 1
size4=$(json "$(rc -r cache show --json)" 'd["size"]')

# The reader: answers one key from generation 4, then sits idle.
coproc READER { exec "$ringctl" --dir "$directory" -r cache lookup --stdin; }
echo key >&"${READER[1]}"
read -r answer <&"${READER[0]}" || exit 1
same "reader's answer" "$answer" $'key\ta\t10.0.0.1:11211'

rc -r cache up b >/dev/null || exit 1
size5=$(json "$(rc -r cache show --json)" 'd["size"]')
held=$(whole_pages "$size4")
held_text=$(awk -v b="$held" 'BEGIN { printf "%.1f KiB", b / 1024 }')

# readers --json: the idle reader on superseded generation 4.
out=$(rc -r cache readers --json) || fail "readers --json exited $?"
same "readers generation" "$(json "$out" 'd["generation"]')" 5
same "readers list" "$(json "$out" '[(r["pid"], r["command"], r["generation"], r["current"], r["mapped_bytes"]) for r in d["readers"]]')" \
    "[($READER_PID, 'ringctl', 4, False, $held)]"
same "versions" "$(json "$out" '[(v["generation"], v["current"], v["processes"], v["bytes"]) for v in d["versions"]]')" \
    "[(4, False, 1, $held)]"
same "superseded" "$(json "$out" '(d["superseded_versions"], d["superseded_bytes"])')" "(1, $held)"
same "hidden is a count" "$(json "$out" 'type(d["processes_hidden"]).__name__')" int
hidden=$(json "$out" 'd["processes_hidden"]')

# readers, text: the summary line and the reader's row.
out=$(rc -r cache readers) || fail "readers exited $?"
same "readers first line" "$(head -n 1 <<<"$out")" \
    "ring 'cache', generation 5: 1 process maps it; 1 superseded version held ($held_text)"
same "readers row" "$(grep -E "^$READER_PID " <<<"$out" | tr -s ' ')" \
    "$READER_PID ringctl $(id -u) 4 superseded $held_text 0"

# show's readers line.
line=$(rc -r cache show | grep '^readers:')
same "show readers line" "${line%%;*}" \
    "readers:       1 process, 1 on superseded versions (1 held, $held_text)"

# metrics for one ring: promtool accepts it, and the samples say what is true.
out=$(rc -r cache metrics) || fail "metrics exited $?"
promtool_accepts "metrics -r cache" "$out"
same "generation" "$(samples "$out" 'shmring_ring_generation{')" \
    'shmring_ring_generation{ring="cache"} 5'
same "nodes" "$(samples "$out" 'shmring_ring_nodes{')" \
    $'shmring_ring_nodes{ring="cache",state="up"} 2\nshmring_ring_nodes{ring="cache",state="down"} 0'
same "publications" "$(samples "$out" 'shmring_ring_publications_total{')" \
    'shmring_ring_publications_total{ring="cache"} 5'
published=$(json "$(rc -r cache show --json)" \
    'int(__import__("calendar").timegm(__import__("time").strptime(d["published_at"], "%Y-%m-%dT%H:%M:%SZ")))')
same "last publication" "$(samples "$out" 'shmring_ring_last_publication_timestamp_seconds{')" \
    "shmring_ring_last_publication_timestamp_seconds{ring=\"cache\"} $published"
same "snapshot bytes" "$(samples "$out" 'shmring_ring_snapshot_bytes{')" \
    "shmring_ring_snapshot_bytes{ring=\"cache\"} $size5"
same "reader processes" "$(samples "$out" 'shmring_ring_reader_processes{')" \
    $'shmring_ring_reader_processes{ring="cache",generation="4",current="false"} 1\nshmring_ring_reader_processes{ring="cache",generation="5",current="true"} 0'
same "superseded versions" "$(samples "$out" 'shmring_ring_superseded_versions{')" \
    'shmring_ring_superseded_versions{ring="cache"} 1'
same "superseded bytes" "$(samples "$out" 'shmring_ring_superseded_bytes{')" \
    "shmring_ring_superseded_bytes{ring=\"cache\"} $held"
same "uninspected" "$(samples "$out" 'shmring_ring_uninspected_processes{' | sed 's/ [0-9]*$//')" \
    'shmring_ring_uninspected_processes{ring="cache"}'
same "unverified" "$(samples "$out" 'shmring_ring_uncounted_processes{ring="cache",reason="unverified"}')" \
    'shmring_ring_uncounted_processes{ring="cache",reason="unverified"} 0'
same "too large" "$(samples "$out" 'shmring_ring_uncounted_processes{ring="cache",reason="too_large"}' | sed 's/ [0-9]*$//')" \
    'shmring_ring_uncounted_processes{ring="cache",reason="too_large"}'
same "no --all family" "$(samples "$out" 'shmring_rings_unreadable')" ""

# The reader looks up again: it switches, and nothing superseded is held.
echo key >&"${READER[1]}"
read -r answer <&"${READER[0]}" || exit 1
out=$(rc -r cache readers --json)
same "after switch" "$(json "$out" '[(r["generation"], r["current"]) for r in d["readers"]], d["superseded_versions"], d["superseded_bytes"]')" \
    "([(5, True)], 0, 0)"
out=$(rc -r cache metrics)
same "reader processes after switch" "$(samples "$out" 'shmring_ring_reader_processes{')" \
    'shmring_ring_reader_processes{ring="cache",generation="5",current="true"} 1'

# metrics --all: every ring, each family once; an empty ring and, as root, a ring
# that belongs to another user (skipped, named on stderr, counted).
rc -r sessions init >/dev/null || exit 1
expected_unreadable=0
if [[ $(id -u) -eq 0 ]]; then
    mkdir -m 0755 "$directory/shmring.squat" && chown 65534 "$directory/shmring.squat"
    expected_unreadable=1
fi
out=$(rc metrics --all 2>"$directory.err") || fail "metrics --all exited $?"
errors=$(cat "$directory.err")
rm -f "$directory.err"
promtool_accepts "metrics --all" "$out"
same "--all generations" "$(samples "$out" 'shmring_ring_generation{')" \
    $'shmring_ring_generation{ring="cache"} 5\nshmring_ring_generation{ring="sessions"} 1'
same "--all HELP lines" "$(grep -c '^# HELP shmring_ring_generation ' <<<"$out")" 1
same "--all empty ring nodes" "$(samples "$out" 'shmring_ring_nodes{ring="sessions"')" \
    $'shmring_ring_nodes{ring="sessions",state="up"} 0\nshmring_ring_nodes{ring="sessions",state="down"} 0'
same "--all empty ring readers" "$(samples "$out" 'shmring_ring_reader_processes{ring="sessions"')" \
    'shmring_ring_reader_processes{ring="sessions",generation="1",current="true"} 0'
same "--all unreadable" "$(samples "$out" 'shmring_rings_unreadable ')" \
    "shmring_rings_unreadable $expected_unreadable"
if ((expected_unreadable == 1)); then
    same "--all warning" "$errors" \
        "ringctl: warning: ring 'squat': skipped: shared-memory object has an unexpected owner or is writable"
else
    same "--all warning" "$errors" ""
fi

# Errors: one line each, with ringctl's exit codes.
err=$(rc -r cache metrics --all 2>&1 >/dev/null)
status=$?
same "-r with --all status" "$status" 2
same "-r with --all message" "$err" "ringctl: error: 'metrics' takes -r RING or --all, not both"
err=$(rc -r missing metrics 2>&1 >/dev/null)
status=$?
same "metrics missing status" "$status" 1
same "metrics missing message" "$err" "ringctl: error: cannot read ring 'missing': no such ring"
err=$(rc -r missing readers 2>&1 >/dev/null)
status=$?
same "readers missing status" "$status" 1
same "readers missing message" "$err" \
    "ringctl: error: cannot read the readers of ring 'missing': no such ring"
err=$(rc -r cache --all readers 2>&1 >/dev/null)
status=$?
same "--all on readers status" "$status" 2
same "--all on readers message" "$err" "ringctl: error: option '--all' does not apply to 'readers'"

if ((failures > 0)); then
    echo "$failures checks failed" >&2
    exit 1
fi
echo "all ringctl operator checks passed (hidden processes here: $hidden)"
