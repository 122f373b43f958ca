#!/bin/bash
# ringctl sync against a real etcd (Debian's etcd-server), started here on loopback
# on free ports with a temporary data directory, and always stopped at the end.
# Every wait is for a condition (ringctl check passing, a log line appearing), with a
# deadline; none is a sleep standing in for synchronisation.
set -u
RINGCTL=${1:?usage: sync_etcd_test.sh RINGCTL}
WORK=$(mktemp -d /tmp/shmring-sync-test.XXXXXX)
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
TAG=st$$
RINGS=("${TAG}a" "${TAG}b" "${TAG}c" "${TAG}d" "${TAG}p" "${TAG}k")
E() { etcdctl --endpoints="$URL" "$@"; }

fingerprint() { "$RINGCTL" -r "$1" show --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])'; }
generation() { "$RINGCTL" -r "$1" show --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])'; }
start_sync() { # RING LOG ARGS...
    local ring=$1 log=$2; shift 2
    "$RINGCTL" -r "$ring" sync "$@" 2>>"$log" &
    PIDS+=($!)
}
# doc N: a node set that changes with N, every id given.
# put_docs FIRST LAST: puts doc FIRST..LAST under /t/doc back to back, each a new
# revision, from one process through etcd's JSON gateway (an etcdctl per put would
# spend the test's minutes starting processes on a loaded machine).
DOC_PY='
import base64, json, sys, urllib.request
def doc(n):
    nodes = [{"name": "node-%d" % i, "id": i, "address": "10.0.%d.%d:11211" % (n % 7, i),
              "weight": 1 + (n + i) % 5} for i in range(n % 13, n % 13 + 100)]
    return json.dumps({"algorithm": "ring", "nodes": nodes})
def put(url, n):
    b64 = lambda text: base64.b64encode(text.encode()).decode()
    body = json.dumps({"key": b64("/t/doc"), "value": b64(doc(n))}).encode()
    urllib.request.urlopen(url + "/v3/kv/put", body, timeout=30).read()
'
doc() { python3 -c "$DOC_PY
print(doc($1))"; }
put_docs() { python3 -c "$DOC_PY
for n in range($1, $2 + 1): put('$URL', n)"; }

start_etcd http

echo "== three syncs, 200 rapid updates, a fourth ring by load after another history (at ${SECONDS}s)"
doc 0 >"$WORK/doc0.json"
E put /t/doc "$(cat "$WORK/doc0.json")" >/dev/null
for r in a b c; do start_sync "$TAG$r" "$WORK/sync-$r.log" --etcd "$URL" --key /t/doc --state "$WORK/state-$r.json"; done
put_docs 1 200 || fail "put"
doc 200 >"$WORK/final.json"
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

echo "== bad values are refused, the ring unchanged, sync still following (at ${SECONDS}s)"
G=$(generation "${TAG}a")
n=0
for bad in 'not json' '{"nodes": [{"name": "x", "weight": 0}]}' '{"nodes": []}' \
    '{"nodes": [{"name": "x", "id": 1}, {"name": "y", "id": 1}]}' '{"colour": 1, "nodes": [{"name": "x"}]}'; do
    n=$((n + 1))
    E put /t/doc "$bad" >/dev/null
    rev=$(E get /t/doc -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
    until_true 20 grep -q "refused key /t/doc at revision $rev: " "$WORK/sync-a.log" || fail "no refusal for: $bad"
    [ "$(generation "${TAG}a")" = "$G" ] || fail "ring changed by: $bad"
done
grep "refused key /t/doc" "$WORK/sync-a.log" | head -5
put_docs 300 300 || fail "put"
doc 300 >"$WORK/d300.json"
until_true 20 "$RINGCTL" -r "${TAG}a" check "$WORK/d300.json" || fail "sync stopped following"
echo "ok"

echo "== etcd stopped mid-stream, then restarted (at ${SECONDS}s)"
stop_etcd
"$RINGCTL" -r "${TAG}a" lookup some-key >/dev/null || fail "ring stopped answering"
until_true 20 grep -q "lost the watch" "$WORK/sync-b.log" || fail "no lost-watch line"
start_etcd http
put_docs 301 301 || fail "put"
doc 301 >"$WORK/d301.json"
for r in a b c; do until_true 60 "$RINGCTL" -r "$TAG$r" check "$WORK/d301.json" || fail "ring $r did not catch up"; done
echo "ok"

echo "== a watch that falls behind a compaction reads everything again and converges (at ${SECONDS}s)"
# Sync a is stopped while its watch is at doc 301's revision; etcd restarts under it
# (the stream breaks), 50 puts follow and the history is compacted past them. When
# it continues, its watch resumes from a revision etcd no longer has.
kill -STOP "${PIDS[0]}"
stop_etcd
start_etcd http
put_docs 500 549 || fail "put"
doc 549 >"$WORK/d549.json"
REV=$(E get /t/doc -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
E compact "$REV" >/dev/null || fail "compact"
kill -CONT "${PIDS[0]}"
until_true 60 grep -q "watch fell behind compaction at revision $REV; reading /t/doc again" \
    "$WORK/sync-a.log" || fail "sync a did not see the compaction"
until_true 60 grep -q "read 1 key at revision $REV from" "$WORK/sync-a.log" || fail "no full re-read"
until_true 60 "$RINGCTL" -r "${TAG}a" check "$WORK/d549.json" || fail "ring a did not converge"
"$RINGCTL" -r "${TAG}d" load "$WORK/d549.json" >/dev/null || fail "load d"
[ "$(fingerprint "${TAG}a")" = "$(fingerprint "${TAG}d")" ] || fail "fingerprint of a differs from a loaded ring"
for r in b c; do until_true 60 "$RINGCTL" -r "$TAG$r" check "$WORK/d549.json" || fail "ring $r did not converge"; done
grep -E "compaction|read 1 key at revision $REV" "$WORK/sync-a.log" | tail -2
echo "ok"

echo "== etcd replaced by a new cluster, its revisions lower: read again, not a silent wait (at ${SECONDS}s)"
# The syncs' watches resume above revision 250; the new cluster starts at 1, so a
# resumed watch would wait for revisions that mean other changes.
stop_etcd
rm -rf "$WORK/etcd"
start_etcd http
put_docs 600 600 || fail "put"
doc 600 >"$WORK/d600.json"
REV=$(E get /t/doc -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
[ "$REV" -lt 10 ] || fail "the new cluster is at revision $REV"
for r in a b c; do
    until_true 60 "$RINGCTL" -r "$TAG$r" check "$WORK/d600.json" || fail "ring $r stayed on the old cluster's set"
done
grep -F "(a new or restored cluster)" "$WORK/sync-a.log" | tail -1
echo "ok"

echo "== prefix mode with 2-second leases (at ${SECONDS}s)"
E put /l/ '{"algorithm": "maglev"}' >/dev/null
KEPT=$(E lease grant 2 | awk '{print $2}')
LOST=$(E lease grant 2 | awk '{print $2}')
E put --lease="$KEPT" /l/kept '{"address": "10.1.0.1:80", "id": 1}' >/dev/null
E put --lease="$LOST" /l/lost '{"address": "10.1.0.2:80", "id": 2}' >/dev/null
etcdctl --endpoints="$URL" lease keep-alive "$KEPT" >/dev/null 2>&1 &
PIDS+=($!)
start_sync "${TAG}p" "$WORK/sync-p.log" --etcd "$URL" --prefix /l/
echo '{"algorithm": "maglev", "nodes": [{"name": "kept", "address": "10.1.0.1:80", "id": 1}]}' >"$WORK/kept.json"
until_true 30 "$RINGCTL" -r "${TAG}p" check "$WORK/kept.json" || fail "lost lease's node stayed"
grep "prefix /l/" "$WORK/sync-p.log" | tail -2
echo "ok"

echo "== a SIGKILLed sync never leaves a torn state file (at ${SECONDS}s)"
for i in $(seq 1 20); do
    "$RINGCTL" -r "${TAG}k" sync --etcd "$URL" --key /t/doc --state "$WORK/state-k.json" 2>/dev/null &
    pid=$!
    put_docs $((400 + i)) $((400 + i)) || fail "put"
    kill -9 $pid; wait $pid 2>/dev/null
    if [ -e "$WORK/state-k.json" ]; then
        "$RINGCTL" -r "${TAG}k" check "$WORK/state-k.json" >/dev/null
        [ $? -le 1 ] || fail "state file torn after SIGKILL $i"
    fi
done
echo "ok"

echo "== started with etcd down: the ring comes back from the state file (at ${SECONDS}s)"
stop_etcd
"$RINGCTL" -r "${TAG}c" destroy >/dev/null
cp "$WORK/state-c.json" "$WORK/restored.json"
kill "${PIDS[2]}"
start_sync "${TAG}c" "$WORK/sync-c2.log" --etcd "$URL" --key /t/doc --state "$WORK/state-c.json"
until_true 30 "$RINGCTL" -r "${TAG}c" check "$WORK/restored.json" || fail "not restored"
grep "state file" "$WORK/sync-c2.log" | head -2
echo "ok"

echo "== SIGTERM: exit 0 (at ${SECONDS}s)"
pid=${PIDS[-1]}
kill -TERM "$pid"
wait "$pid"; rc=$?
[ $rc -eq 0 ] || fail "sync exited $rc after SIGTERM"
echo "ok"
echo "PASS"
