#!/bin/bash
# ringctl sync under systemd, as far as a machine without a booted systemd allows:
# - the installed unit template (cmake --install into a DESTDIR) passes
#   `systemd-analyze verify` for an instance, against this machine's own units;
# - sync tells NOTIFY_SOCKET READY=1 only once the ring holds the source's node set
#   (not while the source is bad, and once only), and STOPPING=1 on SIGTERM, then
#   exits 0. The socket is a unix datagram socket this test listens on; since
#   sd_notify's send is done before sync writes its next log line, each "nothing yet"
#   is asserted after a log line that follows the point in question.
# Usage: sync_systemd_test.sh CMAKE BUILD_DIR RINGCTL [SYSTEMD_ANALYZE]
# Without SYSTEMD_ANALYZE (CMake found none, and SHMRING_REQUIRE_SYNC_TESTS was off)
# the verify part says it is skipped; given, it is run, and fails if it is missing.
set -u
CMAKE=$1 BUILD=$2 RINGCTL=$3 ANALYZE=${4:-}
WORK=$(mktemp -d /tmp/shmring-sync-systemd.XXXXXX)
RING=sd$$
cleanup() {
    "$RINGCTL" -r "$RING" destroy >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== systemd-analyze verify on the installed unit"
if [ -n "$ANALYZE" ]; then
    ROOT=$WORK/root
    DESTDIR=$ROOT "$CMAKE" --install "$BUILD" >/dev/null || fail "cmake --install"
    unit=$(cd "$ROOT" && find . -name 'ringctl-sync@.service' | sed 's|^\.||')
    [ -n "$unit" ] || fail "the unit template was not installed"
    # The targets the unit refers to are this machine's; its ExecStart is checked
    # against the ringctl installed under the root.
    mkdir -p "$ROOT/usr/lib/systemd" && cp -a /usr/lib/systemd/system "$ROOT/usr/lib/systemd/"
    cp "$ROOT$unit" "$ROOT${unit%@.service}@cache.service"
    out=$("$ANALYZE" verify --root="$ROOT" ringctl-sync@cache.service 2>&1); rc=$?
    [ $rc -eq 0 ] && [ -z "$out" ] || fail "verify exited $rc: $out"
    # The check can fail: without the binary it must.
    rm "$ROOT$(grep -o '^ExecStart=[^ ]*' "$ROOT$unit" | cut -d= -f2)"
    out=$("$ANALYZE" verify --root="$ROOT" ringctl-sync@cache.service 2>&1) &&
        fail "verify passed without ringctl"
    grep -q "is not executable" <<<"$out" || fail "verify: $out"
    echo "ok: $unit"
else
    echo "skipped: systemd-analyze not found at configure time (tools/deps.sh installs systemd)"
fi

echo "== READY=1 after the first publication, once; STOPPING=1 on SIGTERM"
python3 - "$RINGCTL" "$RING" "$WORK" <<'PY' || exit 1
import os, select, signal, socket, subprocess, sys, time

ringctl, ring, work = sys.argv[1:4]
TIMEOUT = 60

def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sync.kill()
    sys.exit(1)

path = os.path.join(work, "notify.sock")
listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
listener.bind(path)
listener.setblocking(False)

def pending():
    try:
        return listener.recv(4096).decode()
    except BlockingIOError:
        return None

def wait_datagram():
    ready, _, _ = select.select([listener], [], [], TIMEOUT)
    return listener.recv(4096).decode() if ready else None

source = os.path.join(work, "ring.json")
with open(source, "w") as f:
    f.write("not json")
env = dict(os.environ, NOTIFY_SOCKET=path)
sync = subprocess.Popen([ringctl, "-r", ring, "sync", "--file", source],
                        stderr=subprocess.PIPE, env=env)

# sync's log lines, read from the pipe's descriptor itself: a buffered reader could
# hold a second line that select() then no longer reports.
pending_lines = []
partial = b""

def wait_line(part):
    global partial
    deadline = time.monotonic() + TIMEOUT
    while True:
        while pending_lines:
            line = pending_lines.pop(0)
            print(line)
            if part in line:
                return
        left = deadline - time.monotonic()
        ready, _, _ = select.select([sync.stderr], [], [], max(left, 0))
        if not ready:
            break
        chunk = os.read(sync.stderr.fileno(), 65536)
        if not chunk:
            break
        *complete, partial = (partial + chunk).split(b"\n")
        pending_lines.extend(line.decode() for line in complete)
    fail("no log line with: " + part)

# A bad source: refused, sync follows, and systemd has not been told it is ready.
wait_line("refused file %s" % source)
wait_line("following %s" % source)
if pending() is not None:
    fail("notified before the first publication")

good = '{"nodes": [{"name": "a", "id": 1}]}'
with open(source + ".new", "w") as f:
    f.write(good)
os.rename(source + ".new", source)
message = wait_datagram()
if message is None:
    fail("no READY=1")
if message.split("\n")[0] != "READY=1":
    fail("first notification: %r" % message)
# By the time systemd hears READY=1, workers find the ring.
check = subprocess.run([ringctl, "-r", ring, "check", source], capture_output=True)
if check.returncode != 0:
    fail("READY=1 before the ring held the source (check exited %d)" % check.returncode)
wait_line("published generation 1 from file %s" % source)
print("ok: %r" % message)

with open(source + ".new", "w") as f:
    f.write('{"nodes": [{"name": "a", "id": 1}, {"name": "b", "id": 2}]}')
os.rename(source + ".new", source)
wait_line("published generation 2 from file %s" % source)
extra = pending()
if extra is not None:
    fail("a second notification after a later publication: %r" % extra)

sync.send_signal(signal.SIGTERM)
message = wait_datagram()
if message != "STOPPING=1":
    fail("after SIGTERM: %r" % message)
try:
    rc = sync.wait(TIMEOUT)
except subprocess.TimeoutExpired:
    fail("sync did not exit after SIGTERM")
if rc != 0:
    fail("sync exited %d after SIGTERM" % rc)
print("ok: %r, exit 0" % message)
PY
echo "PASS"
