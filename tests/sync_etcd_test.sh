#!/bin/bash
# ringctl sync --key against a real etcd (Debian's etcd-server), started here on
# loopback on free ports with a temporary data directory, and always stopped at the
# end: three syncs (three hosts, one given a dead endpoint first) converge on the
# same ring as `load` after 200 rapid updates; SIGTERM and SIGINT end sync with
# status 0 within a second while it waits in its watch; bad values are refused with
# their exact line, the ring unchanged, and the good put after each is applied.
# sync_etcd_outage_test.sh covers outages, compaction and restores.
# Every wait is for a condition (ringctl check passing, a log line appearing), with a
# deadline; none is a sleep standing in for synchronisation.
set -u
RINGCTL=${1:?usage: sync_etcd_test.sh RINGCTL}
WORK=$(mktemp -d /tmp/shmring-sync-test.XXXXXX)
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
TAG=st$$
RINGS=("${TAG}a" "${TAG}b" "${TAG}c" "${TAG}d" "${TAG}s" "${TAG}i")

echo "== three syncs, 200 rapid updates, a fourth ring by load after another history (at ${SECONDS}s)"
three_syncs
REV=$(put_docs /t/doc 1 200 "$WORK/final.json") || fail "put"
for r in a b c; do
    until_true 60 "$RINGCTL" -r "$TAG$r" check "$WORK/final.json" || fail "ring $r did not converge"
done
for i in 5 17 3; do doc "$i" | "$RINGCTL" -r "${TAG}d" load - >/dev/null; done
"$RINGCTL" -r "${TAG}d" load "$WORK/final.json" >/dev/null || fail "load d"
F=$(fingerprint "${TAG}a")
for r in b c d; do [ "$(fingerprint "$TAG$r")" = "$F" ] || fail "fingerprint of $r differs"; done
seq 1 100000 | sed 's/^/key-/' >"$WORK/keys"
for r in a b c d; do "$RINGCTL" -r "$TAG$r" lookup --stdin <"$WORK/keys" >"$WORK/answers-$r"; done
[ "$(wc -l <"$WORK/answers-a")" -eq 100000 ] || fail "lookup answered $(wc -l <"$WORK/answers-a") keys"
for r in b c d; do cmp -s "$WORK/answers-a" "$WORK/answers-$r" || fail "answers of $r differ"; done
echo "ok: 4 rings, fingerprint $F, 100000 identical answers"

echo "== SIGTERM and SIGINT while idle in a watch (at ${SECONDS}s)"
# Two more syncs: s gets SIGTERM, i SIGINT, once each has published the last
# revision and waits in its watch (nothing is being put).
for r in s i; do start_sync "$TAG$r" "$WORK/sync-$r.log" --etcd "$URL" --key /t/doc; done
for r in s i; do
    wait_line "$WORK/sync-$r.log" "ringctl: sync: ring '$TAG$r': published generation 1 from key /t/doc at revision $REV (100 added, 0 removed, 0 changed)"
done
stops_within_a_second TERM "${PIDS[-2]}" "sync s, idle in its watch"
stops_within_a_second INT "${PIDS[-1]}" "sync i, idle in its watch"

echo "== bad values are refused with one exact line, the ring unchanged, sync following (at ${SECONDS}s)"
# Each bad value is followed by a good one, which must be applied.
n=300
while IFS='|' read -r bad error; do
    BEFORE=$(ring_state "${TAG}a")
    rev=$(put_raw /t/doc "$bad") || fail "put"
    wait_line "$WORK/sync-a.log" \
        "ringctl: sync: ring '${TAG}a': refused key /t/doc at revision $rev: $error; ring unchanged"
    [ "$(ring_state "${TAG}a")" = "$BEFORE" ] || fail "generation or fingerprint changed by: $bad"
    n=$((n + 1))
    put_docs /t/doc $n $n "$WORK/good.json" >/dev/null || fail "put"
    until_true 60 "$RINGCTL" -r "${TAG}a" check "$WORK/good.json" || fail "sync stopped following after: $bad"
    echo "ok: $error"
done <<'EOF'
not json|line 1, column 3: invalid token near 'not'
{"nodes": [{"name": "x", "weight": 0}]}|nodes[0].weight: must be an integer from 1 to 65535
{"nodes": []}|nodes: the node set is empty
{"nodes": [{"name": "x", "id": 1}, {"name": "y", "id": 1}]}|nodes[1].id: duplicate id 1 (nodes[0] has it)
{"nodes": [{"name": "x", "id": 1}, {"name": "x", "id": 2}]}|nodes[1].name: duplicate node name "x"
{"colour": 1, "nodes": [{"name": "x"}]}|colour: unknown field
EOF
echo "PASS"
