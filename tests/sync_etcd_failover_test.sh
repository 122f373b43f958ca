#!/bin/bash
# ringctl sync fails over between the members of a real etcd cluster (Debian's
# etcd-server: three members on loopback on free ports, temporary data directories,
# always stopped at the end): a sync given every member follows the first; when that
# member stops, the lost watch is logged naming it, and the sync follows the next
# member, so a put made there reaches the ring.
# Every wait is for a condition, with a deadline.
set -u
RINGCTL=${1:?usage: sync_etcd_failover_test.sh RINGCTL}
WORK=$(mktemp -d /tmp/shmring-sync-failover.XXXXXX)
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
# Six free loopback ports (asked of the kernel): a client and a peer port a member.
read -r -a PORTS <<<"$(python3 -c 'import socket
held = [socket.socket() for _ in range(6)]
for s in held: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in held))')"
RING=fo$$
RINGS=("$RING")
MEMBERS=() CLUSTER=
for i in 0 1 2; do
    MEMBERS+=("http://127.0.0.1:${PORTS[i]}")
    CLUSTER+="${CLUSTER:+,}m$i=http://127.0.0.1:${PORTS[i + 3]}"
done
MEMBER_PIDS=()
for i in 0 1 2; do
    etcd --name "m$i" --data-dir "$WORK/m$i" --listen-client-urls "${MEMBERS[i]}" \
        --advertise-client-urls "${MEMBERS[i]}" --listen-peer-urls "http://127.0.0.1:${PORTS[i + 3]}" \
        --initial-advertise-peer-urls "http://127.0.0.1:${PORTS[i + 3]}" \
        --initial-cluster "$CLUSTER" >>"$WORK/etcd-m$i.log" 2>&1 &
    MEMBER_PIDS+=($!)
    PIDS+=($!)
done
ALL=$(IFS=,; echo "${MEMBERS[*]}")
until_true 60 etcdctl --endpoints="$ALL" endpoint health || fail "the three-member cluster did not start"
# Puts go to the second member, which stays up.
URL=${MEMBERS[1]}

echo "== a sync given three members follows the first (at ${SECONDS}s)"
rev=$(put_docs /t/doc 1 1 "$WORK/doc.json") || fail "put"
start_sync "$RING" "$WORK/sync.log" --etcd "$ALL" --key /t/doc
SYNC=${PIDS[-1]}
wait_line "$WORK/sync.log" "ringctl: sync: ring '$RING': read 1 key at revision $rev from ${MEMBERS[0]}"
rev=$(put_docs /t/doc 2 5 "$WORK/doc.json") || fail "put"
until_true 60 "$RINGCTL" -r "$RING" check "$WORK/doc.json" || fail "the ring did not follow the first member"
echo "ok: following ${MEMBERS[0]}"

echo "== the first member stops: the sync names it and follows the next (at ${SECONDS}s)"
kill "${MEMBER_PIDS[0]}"
until_true 60 gone "${MEMBER_PIDS[0]}" || fail "the first member did not stop"
wait_line_like "$WORK/sync.log" \
    "ringctl: sync: ring '$RING': lost the watch on ${MEMBERS[0]} at revision $rev: .*; ring kept, resuming"
rev=$(put_docs /t/doc 6 6 "$WORK/doc.json") || fail "put"
until_true 60 "$RINGCTL" -r "$RING" check "$WORK/doc.json" || fail "the ring did not follow the next member"
grep -F "lost the watch on ${MEMBERS[0]}" "$WORK/sync.log" | head -n 1
echo "ok: document 6 (revision $rev) reached the ring from the remaining members"
stops_within_a_second TERM "$SYNC" "sync, after failing over"
echo "PASS"
