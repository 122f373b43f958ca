#!/bin/bash
# ringctl sync --file: a write in place and a replacement by rename are both
# followed; a bad file is refused with the ring unchanged; --once's exit statuses.
# Every wait is for a condition, with a deadline.
set -u
RINGCTL=${1:?usage: sync_file_test.sh RINGCTL [PROMTOOL]}
WORK=$(mktemp -d /tmp/shmring-sync-file.XXXXXX)
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
RING=sf$$
RINGS=("$RING")
PID=
F=$WORK/ring.json
echo '{"nodes": [{"name": "a", "id": 1}]}' >"$F"
"$RINGCTL" -r "$RING" sync --file "$F" --once 2>"$WORK/once.log"; rc=$?
[ $rc -eq 0 ] || fail "--once exited $rc"
"$RINGCTL" -r "$RING" check "$F" || fail "--once did not load"
"$RINGCTL" -r "$RING" sync --file "$WORK/missing.json" --once 2>/dev/null; rc=$?
[ $rc -eq 1 ] || fail "--once of a missing file exited $rc, not 1"

M=$WORK/sync.prom
"$RINGCTL" -r "$RING" sync --file "$F" --metrics "$M" 2>"$WORK/sync.log" &
PID=$!
PIDS+=("$PID")
until_true 60 grep -q "following $F" "$WORK/sync.log" || fail "not following"

# In place.
echo '{"nodes": [{"name": "a", "id": 1}, {"name": "b", "id": 2}]}' >"$F"
until_true 60 "$RINGCTL" -r "$RING" check "$F" || fail "write in place not seen"
# Replaced by rename, as configuration management does.
echo '{"nodes": [{"name": "c", "id": 3}]}' >"$WORK/ring.json.new"
mv "$WORK/ring.json.new" "$F"
until_true 60 "$RINGCTL" -r "$RING" check "$F" || fail "rename not seen"
G=$("$RINGCTL" -r "$RING" show --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])')
# A bad file: refused, the ring unchanged, and the next good one applied.
echo '{"nodes": [{"name": "c", "weight": 0}]}' >"$F"
until_true 60 grep -q "refused file $F: nodes\[0\].weight: must be an integer from 1 to 65535; ring unchanged" "$WORK/sync.log" || fail "bad file not refused"
G2=$("$RINGCTL" -r "$RING" show --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])')
[ "$G" = "$G2" ] || fail "bad file changed the ring"
echo '{"nodes": [{"name": "d", "id": 4}]}' >"$F"
until_true 60 "$RINGCTL" -r "$RING" check "$F" || fail "stopped following after a bad file"
# sync's metrics file: what happened, exactly, and valid for Prometheus' own parser.
sample() { grep "^$1{ring=\"$RING\"} " "$M" | cut -d' ' -f2; }
# The metrics file is rewritten after the publication that check sees: wait for it
# (the sample is read again at every attempt).
sample_is() { [ "$(sample "$1")" = "$2" ]; }
until_true 60 sample_is shmring_sync_publications_total 3 ||
    fail "publications: $(sample shmring_sync_publications_total), expected 3"
[ "$(sample shmring_sync_refusals_total)" = 1 ] || fail "refusals: $(sample shmring_sync_refusals_total)"
[ "$(sample shmring_sync_errors_total)" = 0 ] || fail "errors: $(sample shmring_sync_errors_total)"
[ "$(sample shmring_sync_in_step)" = 1 ] || fail "in step: $(sample shmring_sync_in_step)"
[ "$(sample shmring_sync_last_applied_revision)" = 0 ] || fail "a file has no revision"
[ "$(sample shmring_sync_last_applied_timestamp_seconds)" -ge "$(($(date +%s) - 60))" ] ||
    fail "last applied: $(sample shmring_sync_last_applied_timestamp_seconds)"
PROMTOOL=${2:-promtool}
"$PROMTOOL" check metrics <"$M" || fail "promtool refused $M"
kill -TERM "$PID"; wait "$PID"; rc=$?; PID=
[ $rc -eq 0 ] || fail "SIGTERM: exit $rc"
# A stop that comes while ringctl is still starting the helper, made certain rather
# than raced for: Python blocks SIGTERM, sends it to itself and becomes ringctl, so
# the signal is pending through both execs. sync must take it as a stop (exit 0),
# neither dying of it (143) nor leaving it blocked and running on (killed after
# 10 s: 137; a SIGTERM from timeout would be blocked too).
timeout -s KILL 10 python3 -c '
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
os.kill(os.getpid(), signal.SIGTERM)
os.execv(sys.argv[1], sys.argv[1:])' "$RINGCTL" -r "$RING" sync --file "$F" 2>"$WORK/pending.log"
rc=$?
[ $rc -eq 0 ] || fail "a SIGTERM pending as sync started: exit $rc"

# A missing --file is named as a missing file, not as a missing ring.
"$RINGCTL" -r "$RING" sync --file "$WORK/missing.json" --once 2>"$WORK/missing.log"
line="ringctl: sync: ring '$RING': cannot read $WORK/missing.json: No such file or directory; ring unchanged"
[ "$(cat "$WORK/missing.log")" = "$line" ] || fail "missing file: $(cat "$WORK/missing.log")"

# A file that never ends (a link to /dev/zero) is refused at the documented cap.
ln -s /dev/zero "$WORK/zero.json"
"$RINGCTL" -r "$RING" sync --file "$WORK/zero.json" --once 2>"$WORK/zero.log"; rc=$?
line="ringctl: sync: ring '$RING': cannot read $WORK/zero.json: larger than 268435456 bytes, the limit for a node set; ring unchanged"
[ $rc -eq 1 ] && [ "$(cat "$WORK/zero.log")" = "$line" ] || fail "/dev/zero: exit $rc: $(cat "$WORK/zero.log")"

# The state file takes the ring's mode and group: a 0600 ring's node set is not
# published to every user through it.
mode_of() { stat -c '%a %G' "$1"; }
for ring_mode in 0600 0640; do
    R=$RING$ring_mode
    RINGS+=("$R")
    "$RINGCTL" -r "$R" --mode "$ring_mode" --group daemon init >/dev/null || fail "init $R"
    "$RINGCTL" -r "$R" sync --file "$F" --state "$WORK/$R.state" --once 2>/dev/null ||
        fail "sync --state of $R"
    [ "$(mode_of "$WORK/$R.state")" = "${ring_mode#0} daemon" ] ||
        fail "state file of a $ring_mode ring: $(mode_of "$WORK/$R.state")"
done

# A state file is read only when it is the ring's owner's (or root's) own regular
# file that its group and others cannot write: whatever another user planted is
# refused in one line that says what it is and whose, never what it holds, and
# sync goes on as without a state file (with --once and no source: exit 1, no ring).
if [ "$(id -u)" = 0 ]; then
    PLANT=$WORK/public
    chmod 0711 "$WORK" # nobody may pass through to the sticky directory
    mkdir -m 1777 "$PLANT"
    AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    evil='{"nodes": [{"name": "evil", "address": "6.6.6.6:11211"}]}'
    "${AS_NOBODY[@]}" sh -c "echo '$evil' >$PLANT/planted.state"
    "${AS_NOBODY[@]}" ln -s /etc/shadow "$PLANT/shadow.state"
    echo "$evil" >"$PLANT/writable.state"
    chmod 0666 "$PLANT/writable.state"
    mkfifo -m 0600 "$PLANT/fifo.state"
    refused() { # NAME KIND OWNER WHY
        R=${RING}x
        RINGS+=("$R")
        "$RINGCTL" -r "$R" sync --file "$WORK/missing.json" --state "$PLANT/$1" --once \
            2>"$WORK/refused.log"; rc=$?
        expected="ringctl: sync: ring '$R': cannot read $WORK/missing.json: No such file or directory; ring unchanged
ringctl: sync: ring '$R': no ring to restore: state file $PLANT/$1 is a $2 owned by $3$4; not read"
        [ $rc -eq 1 ] || fail "$1: exit $rc"
        [ "$(cat "$WORK/refused.log")" = "$expected" ] || fail "$1: $(cat "$WORK/refused.log")"
        "$RINGCTL" -r "$R" show >/dev/null 2>&1 && fail "$1: a ring was made from it"
        return 0
    }
    refused planted.state "regular file" "uid 65534 (nobody)" ", neither the ring's owner nor root"
    refused shadow.state "symbolic link" "uid 65534 (nobody)" ", not a regular file"
    refused writable.state "regular file" "uid 0 (root)" " that its group or others can write (mode 0666)"
    refused fifo.state "FIFO" "uid 0 (root)" ", not a regular file"
    # The owner's own file, as sync writes it, is read.
    R=${RING}x
    "$RINGCTL" -r "$R" sync --file "$WORK/missing.json" --state "$WORK/${RING}0600.state" \
        --once 2>"$WORK/restored.log"
    "$RINGCTL" -r "$R" check "$F" || fail "the owner's state file was not restored: $(cat "$WORK/restored.log")"
fi
cat "$WORK/sync.log"
echo PASS
