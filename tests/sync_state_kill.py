#!/usr/bin/env python3
"""A SIGKILLed sync never leaves a torn state file.

Usage: sync_state_kill.py RINGCTL RING URL WORK KILLS

While a writer puts 10,000-node documents under one key (each a new state file of
over a megabyte, so that writing it takes real time), a sync with --state is
started and SIGKILLed KILLS times: half the time after a random delay, half the
time at the moment the state file is seen to change (when a plain rewrite would be
half done). After each kill the state file must exist, parse as JSON and hold
exactly one of the documents put. Prints what it saw; exits 1 on the first failure.
"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sync_docs  # noqa: E402

RINGCTL, RING, URL, WORK, KILLS = sys.argv[1:4] + [sys.argv[4], int(sys.argv[5])]
KEY = "/s/doc"
STATE = os.path.join(WORK, "state-k.json")
attempted = set()
stop = threading.Event()
sync = None


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    stop.set()
    if sync is not None and sync.poll() is None:
        sync.kill()
        sync.wait()
    sys.exit(1)


def put(n):
    # Noted before the put is sent: a put whose answer is lost may be committed.
    attempted.add(n)
    sync_docs.put(URL, KEY, json.dumps(sync_docs.big(n)))


def writer():
    n = 1
    while not stop.is_set():
        put(n)
        n += 1
        # At most a few puts a second: every one stays in etcd's history.
        stop.wait(0.15)


def file_id():
    try:
        st = os.stat(STATE)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            fail("no " + what + " within %d s" % seconds)
        time.sleep(0.001)


def document_now():
    """The number of the document the state file holds now, or None when there is
    none to read (a torn or foreign file is held_document()'s to report)."""
    try:
        with open(STATE) as f:
            return int(json.load(f)["nodes"][0]["address"].rsplit(":", 1)[1]) - 1000
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def new_document_written(seen, before):
    """A condition for wait_for(): true once the state file holds a document other
    than the last one SEEN. The file is read only when its file_id() differs from
    the last one looked at, BEFORE at first."""
    last = {"id": before}

    def condition():
        now = file_id()
        if now is None or now == last["id"]:
            return False
        last["id"] = now
        return document_now() not in (None, seen[-1] if seen else None)
    return condition


def held_document(kill):
    """The number of the document the state file holds, or fail."""
    try:
        with open(STATE) as f:
            text = f.read()
    except FileNotFoundError:
        fail("kill %d: no state file" % kill)
    try:
        state = json.loads(text)
    except ValueError as error:
        fail("kill %d: torn state file (%d bytes): %s" % (kill, len(text), error))
    try:
        n = int(state["nodes"][0]["address"].rsplit(":", 1)[1]) - 1000
    except (KeyError, IndexError, ValueError):
        fail("kill %d: the state file holds no document put: %.200s" % (kill, text))
    wanted = sync_docs.big(n)
    if (n not in attempted or state.get("algorithm") != wanted["algorithm"]
            or state.get("vnodes") != wanted["vnodes"]
            or sync_docs.node_table(state) != sync_docs.node_table(wanted)):
        fail("kill %d: the state file is not document %d, one that was put" % (kill, n))
    return n


put(0)
thread = threading.Thread(target=writer, daemon=True)
thread.start()
random.seed(os.getpid())
seen = []
with open(os.path.join(WORK, "sync-k.log"), "ab") as log:
    for kill in range(KILLS):
        before = file_id()
        sync = subprocess.Popen([RINGCTL, "-r", RING, "sync", "--etcd", URL, "--key", KEY,
                                 "--state", STATE], stderr=log)
        if kill == 0:
            # The test means nothing without a state file: the first sync must write one.
            wait_for(lambda: file_id() is not None, 120, "state file from the first sync")
        if kill % 2 == 0:
            how = "after a random delay"
            time.sleep(random.uniform(0, 1.0))
        else:
            # Sync follows the writer's puts, which only go up: a document other than
            # the last one seen is newer than every one seen, so each of these kills
            # adds a document to `seen`.
            how = "as the state file changed"
            wait_for(new_document_written(seen, before), 120,
                     "a new document in the state file")
        sync.send_signal(signal.SIGKILL)
        sync.wait()
        seen.append(held_document(kill))
        print("kill %2d %-26s: state file whole, document %d" % (kill, how, seen[-1]))
stop.set()
thread.join(30)
strays = [name for name in os.listdir(WORK) if name.startswith("state-k.json.")]
print("%d kills, %d documents put, state file held %d different documents, "
      "%d stray temporary files" % (KILLS, len(attempted), len(set(seen)), len(strays)))
# The kills must have landed while sync was following a moving source, not on one
# file written once: the first kill's document and one new document for each kill
# that waited for one, unless a state file went back to an older document.
if len(set(seen)) < 1 + KILLS // 2:
    fail("the state file held %d different documents, fewer than the %d waited for"
         % (len(set(seen)), 1 + KILLS // 2))
