#!/bin/bash
# A runnable demo of docs/fleet.md: starts etcd on loopback, three `ringctl sync` on
# three rings (standing in for three hosts), makes live changes in etcd, and shows
# that every ring follows with the same fingerprint. Everything is stopped and
# removed at the end.
# Usage: tools/demo-etcd.sh [BUILD_DIR]   (default: build)
set -eu
RINGCTL=${1:-build}/tools/ringctl
WORK=$(mktemp -d /tmp/shmring-demo-etcd.XXXXXX)
export ETCDCTL_API=3
# shellcheck source=tools/etcd-loopback.sh
. "$(dirname "$0")/etcd-loopback.sh"
etcd_loopback_ports
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for h in 1 2 3; do "$RINGCTL" -r demo-host$h destroy >/dev/null 2>&1 || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
E() { etcdctl --endpoints="$URL" "$@"; }
step() { echo; echo "### $*"; }
show_rings() {
    for h in 1 2 3; do
        printf 'host%d: ' $h
        "$RINGCTL" -r demo-host$h show --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("generation", d["generation"], "fingerprint", d["fingerprint"], "nodes", len(d["nodes"]))'
    done
}
wait_all() { # FILE: until every ring holds it
    for h in 1 2 3; do
        until "$RINGCTL" -r demo-host$h check "$1" >/dev/null 2>&1; do sleep 0.1; done
    done
}

step "etcd on $URL"
etcd --name demo --data-dir "$WORK/etcd" --listen-client-urls "$URL" --advertise-client-urls "$URL" \
    --listen-peer-urls "http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
    --initial-cluster "demo=http://127.0.0.1:$PEER_PORT" >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
until E endpoint health >/dev/null 2>&1; do sleep 0.1; done

step "parameters and two servers under the prefix /shmring/cache/"
E put /shmring/cache/ '{"algorithm": "ketama"}'
E put /shmring/cache/mc1 '{"address": "10.0.0.1:11211", "id": 1}'
E put /shmring/cache/mc2 '{"address": "10.0.0.2:11211", "id": 2}'

step "three hosts: ringctl -r demo-hostN sync --etcd $URL --prefix /shmring/cache/"
for h in 1 2 3; do
    "$RINGCTL" -r demo-host$h sync --etcd "$URL" --prefix /shmring/cache/ \
        --state "$WORK/host$h.json" 2> >(sed "s/^/  [host$h] /" >&2) &
    PIDS+=($!)
done
cat >"$WORK/two.json" <<'J'
{"algorithm": "ketama", "nodes": [{"name": "mc1", "address": "10.0.0.1:11211", "id": 1},
 {"name": "mc2", "address": "10.0.0.2:11211", "id": 2}]}
J
wait_all "$WORK/two.json"
show_rings

step "a third server registers with a 3-second lease, kept alive"
LEASE=$(E lease grant 3 | awk '{print $2}')
E put --lease="$LEASE" /shmring/cache/mc3 '{"address": "10.0.0.3:11211", "id": 3, "weight": 2}'
etcdctl --endpoints="$URL" lease keep-alive "$LEASE" >/dev/null 2>&1 &
KEEPALIVE=$!
PIDS+=($KEEPALIVE)
cat >"$WORK/three.json" <<'J'
{"algorithm": "ketama", "nodes": [{"name": "mc1", "address": "10.0.0.1:11211", "id": 1},
 {"name": "mc2", "address": "10.0.0.2:11211", "id": 2},
 {"name": "mc3", "address": "10.0.0.3:11211", "id": 3, "weight": 2}]}
J
wait_all "$WORK/three.json"
show_rings

step "a bad value is refused everywhere; the rings stay as they were"
E put /shmring/cache/mc4 '{"address": "10.0.0.4:11211", "weight": 0}'
sleep 1
show_rings
E del /shmring/cache/mc4

step "mc3 dies (its keep-alive stops): it leaves every ring within the lease's TTL"
kill "$KEEPALIVE"
wait_all "$WORK/two.json"
show_rings

step "a fleet check, as monitoring would run it on each host"
for h in 1 2 3; do
    "$RINGCTL" -r demo-host$h check "$WORK/two.json" && echo "host$h: in step"
done
echo; echo "demo done"
