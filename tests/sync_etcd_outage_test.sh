#!/bin/bash
# ringctl sync --key against a real etcd (Debian's etcd-server), started here on
# loopback on free ports with a temporary data directory, and always stopped at the
# end, on three rings (three hosts; one sync given a dead endpoint first):
# - etcd stopped for 3 s while a writer's puts are in flight: every ring answers
#   exactly as the document it holds, SIGTERM and SIGINT end syncs in reconnect
#   backoff with status 0 within a second, and after the restart every ring reaches
#   the fingerprint of a ring loaded from the new document;
# - a watch behind a compaction reads again; a rebuilt cluster (revisions from 1) is
#   read again; a sync started with etcd down restores its ring from the state file.
# Every wait is for a condition (ringctl check passing, a log line appearing), with a
# deadline; none is a sleep standing in for synchronisation.
set -u
RINGCTL=${1:?usage: sync_etcd_outage_test.sh RINGCTL}
WORK=$(mktemp -d /tmp/shmring-sync-outage.XXXXXX)
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
# written_at_least N: the writer below has sent N puts.
written_at_least() { [ "$(wc -l <"$WORK/written")" -ge "$1" ]; }
TAG=so$$
RINGS=("$TAG"{a,b,c,d,s,i})
echo "== three syncs in step, two more for the signals (at ${SECONDS}s)"
three_syncs
LAST_GOOD=20
put_docs /t/doc 1 $LAST_GOOD "$WORK/good.json" >/dev/null || fail "put"
for r in s i; do start_sync "$TAG$r" "$WORK/sync-$r.log" --etcd "$URL" --key /t/doc; done
PID_S=${PIDS[-2]} PID_I=${PIDS[-1]}
for r in a b c s i; do
    until_true 60 "$RINGCTL" -r "$TAG$r" check "$WORK/good.json" || fail "ring $r did not converge"
done
seq 1 1000 | sed 's/^/key-/' >"$WORK/keys1000"

echo "== etcd stopped for 3 s while puts are in flight, then restarted (at ${SECONDS}s)"
# A writer puts document after document until etcd goes away under it.
python3 "$DOCS" writer "$URL" /t/doc 700 "$WORK/written" 2>>"$WORK/writer.log" &
WRITER=$!
PIDS+=("$WRITER")
until_true 60 written_at_least 20 || fail "the writer did not put 20 documents"
# Each sync's log length now: a "lost the watch" line after it means the sync has
# published every event the ended stream carried (events are handled in order, and
# the stream's end after them), so that its ring no longer changes under the checks.
declare -A LOG_LINES
for r in a b c s i; do LOG_LINES[$r]=$(wc -l <"$WORK/sync-$r.log"); done
lost_watch_since() { tail -n +$((LOG_LINES[$1] + 1)) "$WORK/sync-$1.log" | grep -q "lost the watch on"; }
stop_etcd
STOPPED=${EPOCHREALTIME/./}
until_true 60 gone "$WRITER" || fail "the writer went on without etcd"
LAST=$(tail -n 1 "$WORK/written")
echo "etcd stopped while document $LAST was being put"
# Sync s and i are now in reconnect backoff (each logged its lost watch).
for r in s i; do
    until_true 60 grep -q "lost the watch on $URL" "$WORK/sync-$r.log" || fail "sync $r did not lose its watch"
done
stops_within_a_second TERM "$PID_S" "sync s, in reconnect backoff"
stops_within_a_second INT "$PID_I" "sync i, in reconnect backoff"
for r in a b c; do
    until_true 60 lost_watch_since "$r" || fail "sync $r did not lose its watch"
done
declare -A HELD_STATE
# Which document each ring holds (one the writer put, or the last good one), and
# the answers a ring loaded from that document gives.
for r in a b c; do
    "$RINGCTL" -r "$TAG$r" dump >"$WORK/held-$r.json" || fail "dump $r"
    held=$(python3 "$DOCS" which "$WORK/held-$r.json" "$LAST_GOOD" $(seq 700 $((LAST + 1)))) ||
        fail "ring $r holds none of the documents put"
    doc "$held" >"$WORK/held-doc-$r.json"
    "$RINGCTL" -r "$TAG$r" check "$WORK/held-doc-$r.json" >/dev/null || fail "ring $r is not exactly document $held"
    "$RINGCTL" -r "${TAG}d" load "$WORK/held-doc-$r.json" >/dev/null || fail "load d"
    "$RINGCTL" -r "${TAG}d" lookup --stdin <"$WORK/keys1000" >"$WORK/expected-$r"
    HELD_STATE[$r]=$(ring_state "$TAG$r")
    echo "ring $r holds document $held (generation and fingerprint ${HELD_STATE[$r]})"
done
# Until etcd has been down 3 s, and at least three times, every ring answers
# exactly as before.
checks=0
while :; do
    for r in a b c; do
        "$RINGCTL" -r "$TAG$r" lookup --stdin <"$WORK/keys1000" >"$WORK/outage-$r" || fail "ring $r stopped answering"
        cmp -s "$WORK/outage-$r" "$WORK/expected-$r" || fail "ring $r answers differently during the outage"
        [ "$(ring_state "$TAG$r")" = "${HELD_STATE[$r]}" ] || fail "ring $r changed during the outage"
    done
    checks=$((checks + 1))
    [ $checks -ge 3 ] && [ $((${EPOCHREALTIME/./} - STOPPED)) -ge 3000000 ] && break
done
echo "ok: 3 rings answered 1000 keys exactly as before, $checks times, etcd down $(((${EPOCHREALTIME/./} - STOPPED) / 1000)) ms"
# Ring c's sync fails over to its other endpoint, dead too, and says so, naming it.
until_true 60 grep -q "lost the watch on $URL at revision" "$WORK/sync-c.log" || fail "sync c did not lose its watch"
R_C=$(grep -o "lost the watch on $URL at revision [0-9]*" "$WORK/sync-c.log" | tail -n 1 | awk '{print $NF}')
wait_line_like "$WORK/sync-c.log" \
    "ringctl: sync: ring '${TAG}c': lost the watch on $DEAD at revision $R_C: $CURL_REFUSED; ring kept, resuming"
start_etcd http
FINAL=$((LAST + 2))
put_docs /t/doc $FINAL $FINAL "$WORK/final-outage.json" >/dev/null || fail "put"
"$RINGCTL" -r "${TAG}d" load "$WORK/final-outage.json" >/dev/null || fail "load d"
F=$(fingerprint "${TAG}d")
for r in a b c; do
    until_true 60 has_fingerprint "$TAG$r" "$F" || fail "ring $r did not reach document $FINAL"
done
echo "ok: every ring at document $FINAL, fingerprint $F"

echo "== a watch that falls behind a compaction reads everything again and converges (at ${SECONDS}s)"
# Sync a is stopped while its watch is at the last revision; etcd restarts under it
# (the stream breaks), 50 puts follow and the history is compacted past them. When
# it continues, its watch resumes from a revision etcd no longer has.
kill -STOP "${PIDS[0]}"
stop_etcd
start_etcd http
REV=$(put_docs /t/doc 500 549 "$WORK/d549.json") || fail "put"
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
# The syncs' watches resume near revision 100; the new cluster starts at 1, so a
# resumed watch would wait for revisions that mean other changes.
stop_etcd
rm -rf "$WORK/etcd"
start_etcd http
REV=$(put_docs /t/doc 600 600 "$WORK/d600.json") || fail "put"
[ "$REV" -lt 10 ] || fail "the new cluster is at revision $REV"
for r in a b c; do
    until_true 60 "$RINGCTL" -r "$TAG$r" check "$WORK/d600.json" || fail "ring $r stayed on the old cluster's set"
done
grep -F "(a new or restored cluster)" "$WORK/sync-a.log" | tail -1
echo "ok"

echo "== started with etcd down: the ring comes back from the state file (at ${SECONDS}s)"
stop_etcd
"$RINGCTL" -r "${TAG}c" destroy >/dev/null
cp "$WORK/state-c.json" "$WORK/restored.json"
stops_within_a_second TERM "$PID_C" "sync c, in reconnect backoff"
start_sync "${TAG}c" "$WORK/sync-c2.log" --etcd "$URL" --key /t/doc --state "$WORK/state-c.json"
until_true 60 "$RINGCTL" -r "${TAG}c" check "$WORK/restored.json" || fail "not restored"
grep "state file" "$WORK/sync-c2.log" | head -2
echo "ok"
echo "PASS"
