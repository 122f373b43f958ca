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
    until_true 30 E endpoint health || fail "etcd did not start on $URL"
}
stop_etcd() { kill "$ETCD_PID"; wait "$ETCD_PID" 2>/dev/null; ETCD_PID=; }
