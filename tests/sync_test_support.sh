# Sourced by the sync tests (sync_etcd_test.sh, sync_etcd_tls_test.sh,
# sync_file_test.sh): waiting on a condition with a deadline, failing with the sync
# logs' last lines, a throwaway etcd on free loopback ports, and the cleanup at exit
# (even on failure). The sourcing test sets RINGCTL and WORK (its temporary
# directory) first, then adds the processes it starts to PIDS and its rings to RINGS.

PIDS=()
RINGS=()
ETCD_PID=
cleanup() {
    local pid ring
    for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
    [ -n "$ETCD_PID" ] && kill -9 "$ETCD_PID" 2>/dev/null
    wait 2>/dev/null
    for ring in "${RINGS[@]}"; do "$RINGCTL" -r "$ring" destroy >/dev/null 2>&1; done
    rm -rf "$WORK"
}
trap cleanup EXIT

# until_true SECONDS COMMAND...: runs COMMAND until it succeeds, at most SECONDS.
# The 0.1 s between attempts is a polling interval, not a synchronisation: the
# condition itself is what is waited for.
until_true() {
    local deadline=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.1
    done
}

# fail MESSAGE: says it, with the last lines of every log in $WORK (the syncs',
# etcd's), and exits 1.
fail() {
    echo "FAIL: $*" >&2
    local log
    for log in "$WORK"/*.log; do
        [ -e "$log" ] && { echo "-- last lines of $(basename "$log"):"; tail -n 5 "$log"; } >&2
    done
    exit 1
}

# Two free loopback ports (CLIENT_PORT, PEER_PORT), as the demo picks them.
# shellcheck source=../tools/etcd-loopback.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/etcd-loopback.sh"
etcd_loopback_ports
export ETCDCTL_API=3

# start_etcd SCHEME [ETCD OPTIONS]: one member on CLIENT_PORT over SCHEME (http or
# https; URL is set to its client URL) with its data in $WORK/etcd, kept across
# restarts; waits until the test's E function (etcdctl with the test's flags) finds
# it healthy.
start_etcd() {
    local scheme=$1; shift
    URL=$scheme://127.0.0.1:$CLIENT_PORT
    etcd --name t --data-dir "$WORK/etcd" --listen-client-urls "$URL" --advertise-client-urls "$URL" \
        --listen-peer-urls "http://127.0.0.1:$PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
        --initial-cluster "t=http://127.0.0.1:$PEER_PORT" "$@" >>"$WORK/etcd.log" 2>&1 &
    ETCD_PID=$!
    until_true 60 E endpoint health || fail "etcd did not start on $URL"
}
stop_etcd() { kill "$ETCD_PID"; wait "$ETCD_PID" 2>/dev/null; ETCD_PID=; }

# What the etcd tests share: etcdctl on the test's etcd, a ring's generation and
# fingerprint, a sync in the background, and the documents of sync_docs.py.
E() { etcdctl --endpoints="$URL" "$@"; }
# ring_state RING: its generation and fingerprint on one line (awk, not python: the
# tests ask often, on a loaded machine).
ring_state() { "$RINGCTL" -r "$1" show | awk '/^generation:/ {g = $2} /^fingerprint:/ {f = $2} END {print g, f}'; }
fingerprint() { ring_state "$1" | cut -d' ' -f2; }
has_fingerprint() { [ "$(fingerprint "$1")" = "$2" ]; } # RING FINGERPRINT
start_sync() { # RING LOG ARGS...: its pid is ${PIDS[-1]}.
    local ring=$1 log=$2; shift 2
    "$RINGCTL" -r "$ring" sync "$@" 2>>"$log" &
    PIDS+=($!)
}
DOCS=$(dirname "${BASH_SOURCE[0]}")/sync_docs.py
doc() { python3 "$DOCS" doc "$1"; }
put_docs() { python3 "$DOCS" put "$URL" "$@"; }  # KEY FIRST LAST [OUT]: prints the revision
put_raw() { python3 "$DOCS" putraw "$URL" "$1" "$2"; } # KEY TEXT: prints the revision

# running PID: whether PID still runs (a zombie, exited but not yet waited for,
# does not: kill -0 would say it does); gone PID: the opposite.
running() {
    local state
    # /proc/PID/stat: pid, (command name: ringctl-sync, python3, no spaces), state.
    read -r _ _ state _ 2>/dev/null <"/proc/$1/stat" || return 1
    [ "$state" != Z ]
}
gone() { ! running "$1"; }

# stops_within_a_second SIGNAL PID WHAT: sends SIGNAL to PID and requires what the
# issue asks of sync: exit status 0 within one second. PID is polled every 20 ms
# until it is gone, for at most one second measured on the clock, so a slow poll can
# only make the wait shorter, never let a late exit pass.
stops_within_a_second() {
    local signal=$1 pid=$2 what=$3 start now rc
    start=${EPOCHREALTIME/./}
    kill -"$signal" "$pid" || fail "$what: cannot send SIG$signal to $pid"
    while running "$pid"; do
        now=${EPOCHREALTIME/./}
        [ $((now - start)) -ge 1000000 ] && fail "$what: still running 1 s after SIG$signal"
        sleep 0.02
    done
    now=${EPOCHREALTIME/./}
    wait "$pid"; rc=$?
    [ $rc -eq 0 ] || fail "$what: exited $rc after SIG$signal"
    echo "ok: $what: exit 0, gone $(((now - start) / 1000)) ms after SIG$signal"
}

# wait_line LOG LINE: waits for exactly LINE (the whole line) in LOG.
wait_line() {
    until_true 60 grep -qxF -- "$2" "$1" || fail "no line in $(basename "$1"): $2"
}
# wait_line_like LOG REGEX: waits for a whole line of LOG matching REGEX (extended),
# for lines that quote what varies from run to run (libcurl's "after 3 ms").
wait_line_like() {
    until_true 60 grep -qxE -- "$2" "$1" || fail "no line in $(basename "$1") matching: $2"
}

# three_syncs: etcd on free ports, document 0 under /t/doc, and three syncs on rings
# ${TAG}a, b and c (three hosts), each with a state file; c is given a dead endpoint
# first and must fail over to the live one, each named in its line. Sets DEAD, PID_C
# and CURL_REFUSED (libcurl's message for DEAD, which names the port and how long
# the refusal took).
three_syncs() {
    local r rev
    # A loopback port nothing listens on: asked of the kernel, then released.
    DEAD=http://127.0.0.1:$(python3 -c 'import socket
s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    CURL_REFUSED="Failed to connect to 127.0.0.1 port ${DEAD##*:} after [0-9]+ ms: Couldn't connect to server"
    start_etcd http
    rev=$(put_docs /t/doc 0 0) || fail "put"
    for r in a b; do
        start_sync "$TAG$r" "$WORK/sync-$r.log" --etcd "$URL" --key /t/doc --state "$WORK/state-$r.json"
    done
    start_sync "${TAG}c" "$WORK/sync-c.log" --etcd "$DEAD,$URL" --key /t/doc --state "$WORK/state-c.json"
    PID_C=${PIDS[-1]}
    wait_line_like "$WORK/sync-c.log" "ringctl: sync: ring '${TAG}c': cannot read /t/doc from $DEAD: $CURL_REFUSED"
    wait_line "$WORK/sync-c.log" "ringctl: sync: ring '${TAG}c': read 1 key at revision $rev from $URL"
    echo "ok: sync c failed over from $DEAD to $URL"
}
