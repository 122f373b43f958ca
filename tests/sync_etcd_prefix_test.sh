#!/bin/bash
# ringctl sync --prefix against a real etcd (Debian's etcd-server, on loopback on
# free ports, always stopped at the end), on two rings standing for two hosts:
# - a node whose 2-second lease is not kept alive leaves every ring, and a node
#   whose lease is kept alive is still in every ring after 3 TTLs;
# - a bad value (invalid JSON under a node key, a node breaking the rules, a bad
#   parameters key, every node deleted) is refused on every ring with its exact
#   line, naming key and revision; the rings keep their generation and fingerprint,
#   and the good put that follows is applied.
# Every wait is for a condition, with a deadline.
set -u
RINGCTL=${1:?usage: sync_etcd_prefix_test.sh RINGCTL}
WORK=$(mktemp -d /tmp/shmring-sync-prefix.XXXXXX)
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
TAG=sp$$
RINGS=("${TAG}p" "${TAG}q")
HOSTS="p q"
# every_ring_holds FILE: both rings hold exactly FILE's node set and parameters.
every_ring_holds() {
    local r
    for r in $HOSTS; do "$RINGCTL" -r "$TAG$r" check "$1" >/dev/null || return 1; done
}

start_etcd http

echo "== prefix mode with 2-second leases, on two rings (at ${SECONDS}s)"
put_raw /l/ '{"algorithm": "maglev"}' >/dev/null || fail "put"
KEPT=$(E lease grant 2 | awk '{print $2}')
LOST=$(E lease grant 2 | awk '{print $2}')
E put --lease="$KEPT" /l/kept '{"address": "10.1.0.1:80", "id": 1}' >/dev/null || fail "put kept"
E put --lease="$LOST" /l/lost '{"address": "10.1.0.2:80", "id": 2}' >/dev/null || fail "put lost"
# Both leases are kept alive until both rings hold both nodes: only then does the
# test let one lapse, so that its node is seen to leave rather than never arrive.
etcdctl --endpoints="$URL" lease keep-alive "$KEPT" >/dev/null 2>&1 &
KEPT_KEEPER=$!
PIDS+=("$KEPT_KEEPER")
etcdctl --endpoints="$URL" lease keep-alive "$LOST" >/dev/null 2>&1 &
LOST_KEEPER=$!
PIDS+=("$LOST_KEEPER")
for r in $HOSTS; do start_sync "$TAG$r" "$WORK/sync-$r.log" --etcd "$URL" --prefix /l/; done
cat >"$WORK/both.json" <<'EOF'
{"algorithm": "maglev", "nodes": [{"name": "kept", "address": "10.1.0.1:80", "id": 1},
                                  {"name": "lost", "address": "10.1.0.2:80", "id": 2}]}
EOF
echo '{"algorithm": "maglev", "nodes": [{"name": "kept", "address": "10.1.0.1:80", "id": 1}]}' >"$WORK/kept.json"
until_true 60 every_ring_holds "$WORK/both.json" || fail "the rings did not take both nodes"
kill "$LOST_KEEPER"
wait "$LOST_KEEPER" 2>/dev/null
LAPSED=${EPOCHREALTIME/./}
until_true 60 every_ring_holds "$WORK/kept.json" || fail "the node whose lease lapsed stayed in a ring"
echo "ok: lost left both rings $(((${EPOCHREALTIME/./} - LAPSED) / 1000)) ms after its keep-alive stopped"
grep -h "prefix /l/" "$WORK"/sync-*.log | tail -n 2
# The kept node stays in both rings for 3 TTLs (6 s) after the other lease lapsed.
checks=0
while [ $checks -lt 3 ] || [ $((${EPOCHREALTIME/./} - LAPSED)) -lt 6000000 ]; do
    every_ring_holds "$WORK/kept.json" || fail "the node whose lease is kept alive left a ring"
    checks=$((checks + 1))
    sleep 0.1 # Between checks, not a synchronisation: each check is the assertion.
done
E lease timetolive "$KEPT" | grep -q "remaining" || fail "the kept lease expired"
echo "ok: kept is in both rings after 6 s more of keep-alive ($checks checks)"

echo "== bad values in prefix mode are refused on every ring (at ${SECONDS}s)"
# kept is put again without a lease, which ends the keep-alive's part: on a loaded
# machine a keep-alive starved past the 2 s TTL would delete kept in the middle of
# what follows, which is about bad values, not leases.
E put /l/kept '{"address": "10.1.0.1:80", "id": 1}' >/dev/null || fail "put kept"
kill "$KEPT_KEEPER"
until_true 60 every_ring_holds "$WORK/kept.json" || fail "kept without its lease"
# bad_value KEY VALUE ERROR: VALUE (or, for a VALUE of "DELETE", deleting every node
# key) is refused on both rings with exactly ERROR after the revision, and the rings
# keep their generation and fingerprint.
bad_value() {
    local key=$1 value=$2 error=$3 r rev
    declare -A before
    for r in $HOSTS; do before[$r]=$(ring_state "$TAG$r"); done
    if [ "$value" = DELETE ]; then
        rev=$(python3 "$DOCS" delete "$URL" /l/0 /l/~) || fail "delete"
    else
        rev=$(put_raw "$key" "$value") || fail "put"
    fi
    error=${error//REV/$rev}
    for r in $HOSTS; do
        wait_line "$WORK/sync-$r.log" \
            "ringctl: sync: ring '$TAG$r': refused prefix /l/ at revision $rev: $error; ring unchanged"
        [ "$(ring_state "$TAG$r")" = "${before[$r]}" ] || fail "ring $r changed by $key: $value"
    done
    echo "ok: $error"
}
# good KEY VALUE EXPECTED: after the put, both rings hold EXPECTED (a JSON file).
good() {
    put_raw "$1" "$2" >/dev/null || fail "put"
    until_true 60 every_ring_holds "$3" || fail "sync stopped following: $1 $2 not applied"
}
cat >"$WORK/good1.json" <<'EOF'
{"algorithm": "maglev", "nodes": [{"name": "bad", "address": "10.1.0.11:80", "id": 3},
                                  {"name": "kept", "address": "10.1.0.1:80", "id": 1}]}
EOF
sed 's/10.1.0.11/10.1.0.12/' "$WORK/good1.json" >"$WORK/good2.json"
sed 's/10.1.0.11/10.1.0.13/' "$WORK/good1.json" >"$WORK/good3.json"
sed 's/"maglev"/"ring"/' "$WORK/good3.json" >"$WORK/good4.json"
sed 's/"maglev"/"ketama"/' "$WORK/good3.json" >"$WORK/good5.json"
echo '{"algorithm": "ketama", "nodes": [{"name": "back", "address": "10.1.0.20:80", "id": 7}]}' >"$WORK/good6.json"

good /l/bad '{"address": "10.1.0.11:80", "id": 3}' "$WORK/good1.json"
bad_value /l/bad 'not json' "key /l/bad (revision REV): line 1, column 3: '[' or '{' expected near 'not'"
good /l/bad '{"address": "10.1.0.12:80", "id": 3}' "$WORK/good2.json"
bad_value /l/bad '{"address": "10.1.0.12:80", "id": 3, "weight": 0}' \
    "key /l/bad: weight: must be an integer from 1 to 65535"
bad_value /l/bad '{"address": "10.1.0.12:80", "id": 3, "colour": 1}' "key /l/bad: colour: unknown field"
good /l/bad '{"address": "10.1.0.13:80", "id": 3}' "$WORK/good3.json"
# The parameters key (the prefix itself): an unknown algorithm, nodes in it, not an
# object; each followed by good parameters, which change the ring.
bad_value /l/ '{"algorithm": "nope"}' \
    'key /l/: algorithm: unknown algorithm "nope" (expected ring, maglev, ketama, twemproxy, nginx, libketama, envoy-maglev, envoy-ring, rendezvous, jump, haproxy, uhashring, hashring, dalli, spymemcached or groupcache)'
good /l/ '{"algorithm": "ring"}' "$WORK/good4.json"
bad_value /l/ '{"algorithm": "ring", "nodes": []}' "key /l/ (revision REV): the parameters key holds no nodes"
bad_value /l/ '["ring"]' "key /l/ (revision REV): must be a JSON object"
good /l/ '{"algorithm": "ketama"}' "$WORK/good5.json"
# Every node key deleted in one revision: an empty set.
bad_value DELETE DELETE "nodes: the node set is empty"
good /l/back '{"address": "10.1.0.20:80", "id": 7}' "$WORK/good6.json"
echo "PASS"
