#!/bin/bash
# ringctl sync as the unit's unprivileged user, end to end, with runuser (there is
# no booted systemd here to start the unit itself), from an installation made by
# `cmake --install` into a DESTDIR:
# - the user shmring is created from the installed sysusers.d file when absent (and
#   removed at the end only then);
# - sync, run as shmring, creates the ring from etcd (on loopback, free ports) and
#   owns it; its state file is shmring's, with the ring's mode;
# - a reader running as nobody refuses the ring until told to trust owner shmring
#   (`ringctl --owner shmring`), then answers from it and follows an update;
# - every system call sync makes (strace: a `sync --once` with a publication and the
#   state file, another through libcurl's resolver thread) is allowed by the unit's
#   SystemCallFilter=, expanded by systemd-analyze;
# - SIGTERM ends sync with status 0.
# Usage: sync_unit_user_test.sh CMAKE BUILD_DIR SYSTEMD_ANALYZE
set -u
CMAKE=$1 BUILD=$2 ANALYZE=$3
if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: runs as root only (runuser, a system user)"
    exit 77
fi
# Readable by shmring and nobody: they run the installed ringctl from in here.
WORK=$(mktemp -d /tmp/shmring-sync-user.XXXXXX)
chmod 0755 "$WORK"
RING=unit$$
SYNC_USER=shmring READER=nobody
CREATED_USER=
SYNC_PID='' RUNUSER_PID=''

# sync_test_support.sh: the waits, fail, etcd on free ports. Its cleanup destroys
# rings as root, which cannot (a ring is changed by its owner only), so this test
# has its own, which also stops the sync running as shmring.
RINGCTL=/nonexistent
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
as_sync() { runuser -u "$SYNC_USER" -- "$@"; }
as_reader() { runuser -u "$READER" -- "$@"; }
cleanup_unit() {
    # sync itself when its pid is known; otherwise runuser, which passes SIGTERM on.
    if [ -n "$SYNC_PID" ]; then
        kill -9 "$SYNC_PID" 2>/dev/null
    elif [ -n "$RUNUSER_PID" ]; then
        kill -TERM "$RUNUSER_PID" 2>/dev/null
    fi
    [ -n "$ETCD_PID" ] && kill -9 "$ETCD_PID" 2>/dev/null
    wait 2>/dev/null
    if [ -x "${RINGCTL_INSTALLED:-}" ] && getent passwd "$SYNC_USER" >/dev/null; then
        as_sync "$RINGCTL_INSTALLED" -r "$RING" destroy >/dev/null 2>&1
    fi
    if [ -n "$CREATED_USER" ]; then
        userdel "$SYNC_USER" 2>/dev/null
        getent group "$SYNC_USER" >/dev/null && groupdel "$SYNC_USER" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup_unit EXIT

ROOT=$WORK/root
DESTDIR=$ROOT "$CMAKE" --install "$BUILD" >/dev/null || fail "cmake --install"
find_installed() { (cd "$ROOT" && find . -path "*/$1" | sed 's|^\.||'); }
RINGCTL_INSTALLED=$ROOT$(find_installed bin/ringctl)
sysusers=$ROOT$(find_installed sysusers.d/shmring.conf)
unit=$ROOT$(find_installed systemd/system/ringctl-sync@.service)
if ! [ -x "$RINGCTL_INSTALLED" ] || ! [ -f "$sysusers" ] || ! [ -f "$unit" ]; then
    fail "not installed: ringctl, sysusers.d/shmring.conf or the unit"
fi
# The user this test runs sync as is the unit's.
grep -qx "User=$SYNC_USER" "$unit" || fail "the unit does not run as $SYNC_USER"
RINGCTL=$RINGCTL_INSTALLED

echo "== the user $SYNC_USER, from the installed sysusers.d file"
if ! getent passwd "$SYNC_USER" >/dev/null; then
    CREATED_USER=1
    systemd-sysusers "$sysusers" || fail "systemd-sysusers $sysusers"
fi
uid=$(id -u "$SYNC_USER") || fail "no user $SYNC_USER"
# A system user: logind's RemoveIPC= removes only other users' shared memory.
[ "$uid" -lt 1000 ] || fail "$SYNC_USER has uid $uid, not a system user's"
echo "ok: $SYNC_USER is uid $uid${CREATED_USER:+ (created by this test)}"

STATE=$WORK/state
install -d -m 0755 -o "$SYNC_USER" -g "$SYNC_USER" "$STATE"
start_etcd http
doc_a='{"nodes": [{"name": "a", "address": "10.0.0.1:11211", "id": 1}]}'
doc_b='{"nodes": [{"name": "b", "address": "10.0.0.2:11211", "id": 2}]}'
E put /t/doc "$doc_a" >/dev/null || fail "put"

echo "== sync as $SYNC_USER creates the ring"
# The shell's pid is sync's: it execs ringctl, which executes its helper in place.
as_sync sh -c 'echo $$ >"$1/sync.pid"; shift; exec "$@"' sh "$STATE" \
    "$RINGCTL" -r "$RING" sync --etcd "$URL" --key /t/doc --state "$STATE/$RING.json" \
    2>>"$WORK/sync.log" &
RUNUSER_PID=$!
until_true 20 test -s "$STATE/sync.pid" || fail "sync did not start"
SYNC_PID=$(cat "$STATE/sync.pid")
# lookup KEY [OPTIONS]: the node the reader (as nobody) gives KEY.
lookup() { local key=$1; shift; as_reader "$RINGCTL" "$@" -r "$RING" lookup "$key" | cut -f2; }
answers() { [ "$(lookup k --owner "$SYNC_USER")" = "$1" ]; } # NODE
until_true 30 answers a || fail "a reader trusting $SYNC_USER never found node a"
dir=/dev/shm/shmring.$RING
[ "$(stat -c %U "$dir")" = "$SYNC_USER" ] || fail "$dir is $(stat -c %U "$dir")'s"
mode=$("$RINGCTL" --owner "$SYNC_USER" -r "$RING" show | awk '/^mode:/ {print $2}')
[ "$mode" = 0644 ] || fail "ring mode $mode"
echo "ok: $dir is $SYNC_USER's, mode $mode; $READER trusting $SYNC_USER finds node a"

echo "== $READER without --owner does not trust the ring"
out=$(as_reader "$RINGCTL" -r "$RING" lookup k 2>&1) && fail "$READER trusted $SYNC_USER's ring: $out"
grep -q "owner" <<<"$out" || fail "refusal without the owner named: $out"
echo "ok: $out"

echo "== an update in etcd is followed"
E put /t/doc "$doc_b" >/dev/null || fail "put"
until_true 30 answers b || fail "the reader never saw node b"
echo "ok: $READER trusting $SYNC_USER follows to node b"

echo "== the state file is $SYNC_USER's, with the ring's mode"
has_b() { grep -q '"b"' "$STATE/$RING.json"; }
until_true 20 has_b || fail "the state file never held node b"
got=$(stat -c '%U %a' "$STATE/$RING.json")
[ "$got" = "$SYNC_USER ${mode#0}" ] || fail "state file: $got, not $SYNC_USER ${mode#0}"
echo "ok: $STATE/$RING.json: $got"

echo "== SIGTERM ends sync with status 0"
kill -TERM "$SYNC_PID" || fail "cannot signal sync"
until_true 30 gone "$SYNC_PID" || fail "sync still runs after SIGTERM"
wait "$RUNUSER_PID"; rc=$?
[ $rc -eq 0 ] || fail "sync (through runuser) exited $rc"
SYNC_PID='' RUNUSER_PID=''
echo "ok: exit 0"

echo "== the system calls of sync are allowed by the unit's SystemCallFilter="
# LeakSanitizer cannot run under ptrace: in the sanitizer build the traced runs leave
# leak checking to the untraced ones above (a later flag wins in ASAN_OPTIONS).
traced_asan_options="${ASAN_OPTIONS:+$ASAN_OPTIONS }detect_leaks=0"
as_traced() { ASAN_OPTIONS=$traced_asan_options runuser -u "$SYNC_USER" -- "$@"; }
# A --once run as shmring traced: the exec of the helper, a publication (fchown of
# the new version), the state file.
E put /t/doc "$doc_a" >/dev/null || fail "put"
as_traced strace -f -qq -o "$STATE/syscalls" "$RINGCTL" -r "$RING" sync --once \
    --etcd "http://localhost:$CLIENT_PORT" --key /t/doc --state "$STATE/$RING.json" \
    2>>"$WORK/sync.log" || fail "sync --once as $SYNC_USER (under strace) failed"
answers a || fail "sync --once did not publish node a"
# libcurl resolves localhost itself; a name it must ask the system resolver for (its
# resolver thread, NSS, DNS) that does not exist: sync fails, after the lookup.
as_traced strace -f -qq -o "$STATE/syscalls-resolver" "$RINGCTL" -r "$RING" sync --once \
    --etcd "http://shmring-test.invalid:$CLIENT_PORT" --key /t/doc \
    2>>"$WORK/sync.log" && fail "sync --once succeeded through a name that does not exist"
grep -q 'Could not resolve host: shmring-test.invalid' "$WORK/sync.log" ||
    fail "sync --once did not try to resolve shmring-test.invalid"
python3 - "$ANALYZE" "$unit" "$STATE/syscalls" "$STATE/syscalls-resolver" <<'PY' ||
import re, subprocess, sys

analyze, unit, traces = sys.argv[1], sys.argv[2], sys.argv[3:]

def expand(name, seen=None):
    """The system calls of a group, from systemd-analyze's own table."""
    if not name.startswith("@"):
        return {name}
    out = subprocess.run([analyze, "syscall-filter", name], capture_output=True,
                         text=True, check=True).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        line = line.strip()
        if line and not line.startswith("#"):
            calls |= expand(line)
    return calls

# SystemCallFilter= lines in order: the first sets an allow list, "~" removes.
allowed = set()
for line in open(unit):
    if not line.startswith("SystemCallFilter="):
        continue
    value = line.split("=", 1)[1].strip()
    deny = value.startswith("~")
    for name in value.lstrip("~").split():
        allowed = allowed - expand(name) if deny else allowed | expand(name)

used = set()
for line in (line for trace in traces for line in open(trace)):
    match = re.match(r"\d+\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]", line)
    if match and match.group(1) not in ("exited", "killed"):
        used.add(match.group(1))
outside = sorted(used - allowed)
if outside:
    print("FAIL: outside the filter: " + " ".join(outside), file=sys.stderr)
    sys.exit(1)
print("ok: %d system calls, all allowed: %s" % (len(used), " ".join(sorted(used))))
PY
    fail "a system call outside the filter"
echo "PASS"
