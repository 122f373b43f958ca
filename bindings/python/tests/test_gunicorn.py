"""shmring in a real gunicorn: opened once in the master, used by 4 forked workers;
and the README's worker, started before its ring exists.

The app module opens the ring at import, and gunicorn runs with --preload, so the
master opens it before it forks its sync workers. Each round holds 4 requests open
at once, once every worker said it is ready (through a pipe, from gunicorn's
post_worker_init hook): a sync worker serves one connection at a time, so the 4
requests go to different workers, and rounds repeat (bounded) until each worker
answered. Every worker must answer 1,000 keys exactly as
`ringctl lookup` does, and after `ringctl add` and `ringctl remove` every worker
must answer from the new generation on its next request.
"""

import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("gunicorn")

WORKERS = 4
KEYS = ["key-%d" % i for i in range(1000)]

APP = textwrap.dedent(
    '''
    """A WSGI app routing the keys of each request body with one shared Ring."""
    import json
    import os

    import shmring

    # Opened at import: in the master, since gunicorn runs with --preload.
    RING = shmring.Ring(os.environ["SHMRING_TEST_RING"], os.environ["SHMRING_TEST_DIR"])
    OPENED_BY = os.getpid()


    def application(environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        keys = environ["wsgi.input"].read(length).decode().split("\\n")
        snapshot = RING.snapshot()
        answers = [[node.name, node.address] for node in map(RING.lookup, keys)]
        ids = RING.lookup_ids(keys)
        assert ids == [RING.lookup_id(key) for key in keys]
        body = json.dumps({
            "pid": os.getpid(),
            "opened_by": OPENED_BY,
            "generation": snapshot.generation,
            "generation_after": RING.generation,
            "answers": answers,
            "ids": ids,
            "nodes": {node.id: [node.name, node.address] for node in snapshot.nodes},
        }).encode()
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(body)))])
        return [body]
    '''
)

CONFIG = textwrap.dedent(
    """
    import os


    def post_worker_init(worker):
        os.write(int(os.environ["SHMRING_TEST_READY_FD"]), b"%d\\n" % os.getpid())
    """
)
ROUNDS = 100


@pytest.fixture
def gunicorn(tmp_path, small_ring):
    """A gunicorn master with WORKERS sync workers on a loopback socket that this
    fixture binds (port 0) and hands over as fd://, so no port can be taken in
    between. Always stopped, with its whole process group."""
    small_ring.load_nodes(30)
    (tmp_path / "shmring_test_app.py").write_text(APP)
    (tmp_path / "gunicorn_conf.py").write_text(CONFIG)
    ready_read, ready_write = os.pipe()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    env = dict(os.environ, SHMRING_TEST_RING=small_ring.name,
               SHMRING_TEST_DIR=small_ring.directory, SHMRING_TEST_READY_FD=str(ready_write))
    log = open(tmp_path / "gunicorn.log", "wb")
    master = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--preload", "--workers", str(WORKERS),
         "--worker-class", "sync", "--bind", "fd://%d" % listener.fileno(),
         "--chdir", str(tmp_path), "--config", str(tmp_path / "gunicorn_conf.py"), "--timeout", "120", "--log-level", "warning",
         "shmring_test_app:application"],
        env=env, pass_fds=[listener.fileno(), ready_write], stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    listener.close()
    os.close(ready_write)
    try:
        wait_for_workers(ready_read, master)
        yield master, port, small_ring
    finally:
        try:
            os.killpg(master.pid, signal.SIGTERM)
            master.wait(timeout=60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        finally:
            try:
                os.killpg(master.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            master.wait()
            log.close()
            os.close(ready_read)
        print((tmp_path / "gunicorn.log").read_text(errors="replace"))


def wait_for_workers(ready_read, master):
    """Reads the pids that WORKERS workers write to the pipe once they are ready."""
    data = b""
    while data.count(b"\n") < WORKERS:
        ready, _, _ = select.select([ready_read], [], [], 120)
        assert ready, "gunicorn's workers did not start within 120 s"
        chunk = os.read(ready_read, 4096)
        assert chunk, "gunicorn exited before its workers were ready"
        data += chunk


def one_round(master, port):
    """Sends WORKERS requests at once, each held open until all are sent, and
    returns their answers (one per worker)."""
    body = "\n".join(KEYS).encode()
    head = ("POST / HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n"
            % len(body)).encode()
    connections = []
    try:
        for _ in range(WORKERS):
            conn = socket.create_connection(("127.0.0.1", port), timeout=120)
            connections.append(conn)
            # All but the last byte: the worker that accepts this connection waits
            # in it, so the next connection goes to another worker.
            conn.sendall(head + body[:-1])
        for conn in connections:
            conn.sendall(body[-1:])
        answers = []
        for conn in connections:
            response = http.client.HTTPResponse(conn)
            response.begin()
            data = response.read()
            assert response.status == 200, data[:2000]
            answers.append(json.loads(data))
        return answers
    finally:
        for conn in connections:
            conn.close()
        assert master.poll() is None, "gunicorn exited"


def check_workers(master, port, ringctl, generation):
    """Makes rounds of requests until every worker answered; every answer (each
    worker's first after a change included) must be ringctl's, from GENERATION."""
    expected = ringctl.lookup(KEYS)
    expected = [list(expected[k][0]) for k in KEYS]
    pids = set()
    for _ in range(ROUNDS):
        for answer in one_round(master, port):
            assert answer["opened_by"] == master.pid != answer["pid"]
            assert answer["generation"] == answer["generation_after"] == generation
            assert answer["answers"] == expected
            assert [answer["nodes"][str(i)] for i in answer["ids"]] == expected
            pids.add(answer["pid"])
        if len(pids) == WORKERS:
            return pids
    raise AssertionError("only %d of %d workers answered in %d rounds"
                         % (len(pids), WORKERS, ROUNDS))


def current_generation(ringctl):
    return json.loads(ringctl("show", "--json").stdout)["generation"]


def test_every_worker_answers_as_ringctl_and_follows_changes(gunicorn):
    master, port, ringctl = gunicorn
    generation = current_generation(ringctl)
    pids = check_workers(master, port, ringctl, generation)

    ringctl("add", "extra", "10.9.9.9:11211", "--weight", "20")
    assert current_generation(ringctl) == generation + 1
    assert check_workers(master, port, ringctl, generation + 1) == pids

    ringctl("remove", "node3")
    assert check_workers(master, port, ringctl, generation + 2) == pids


# The README's worker, run as it is written there ---------------------------------------


README = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "README.md")


def readme_app():
    """The README's `# app.py` example, exactly as the README shows it."""
    text = open(README, encoding="utf-8").read()
    start = text.index("```python\n# app.py")
    return text[start + len("```python\n"):text.index("```", start + 3)]


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_readme_worker_started_before_its_ring(tmp_path, ringctl):
    """One worker of the README's app, started before the ring exists: it boots and
    answers 503, then routes exactly as ringctl once the ring is published, then
    says that the ring was destroyed."""
    (tmp_path / "app.py").write_text(readme_app())
    (tmp_path / "gunicorn_conf.py").write_text(CONFIG)
    ready_read, ready_write = os.pipe()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    env = dict(os.environ, SHMRING_RING=ringctl.name, SHMRING_DIR=ringctl.directory,
               SHMRING_TEST_READY_FD=str(ready_write))
    log = open(tmp_path / "gunicorn.log", "wb")
    master = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--workers", "1", "--worker-class", "sync",
         "--bind", "fd://%d" % listener.fileno(), "--chdir", str(tmp_path),
         "--config", str(tmp_path / "gunicorn_conf.py"), "--timeout", "120",
         "--log-level", "warning", "app:application"],
        env=env, pass_fds=[listener.fileno(), ready_write], stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True)
    listener.close()
    os.close(ready_write)
    try:
        data = b""
        while b"\n" not in data:
            ready, _, _ = select.select([ready_read], [], [], 120)
            assert ready, "gunicorn's worker did not start within 120 s"
            chunk = os.read(ready_read, 4096)
            assert chunk, "gunicorn exited before its worker was ready"
            data += chunk
        name = ringctl.name
        assert get(port, "/user:42") == (503, "ring %s does not exist yet\n" % name)

        ringctl("init")
        ringctl.load_nodes(20)
        expected = ringctl.lookup(KEYS[:200])
        for key in KEYS[:200]:
            [(node, address)] = expected[key]
            assert get(port, "/" + key) == (
                200, "%s -> %s %s (generation 2)\n" % (key, node, address))

        ringctl("down", "node3")
        for key in KEYS[:200]:
            [(node, address)] = ringctl.lookup([key])[key]
            assert get(port, "/" + key) == (
                200, "%s -> %s %s (generation 3)\n" % (key, node, address))

        ringctl("destroy")
        assert get(port, "/user:42") == (503, "ring %s was destroyed (generation 3)\n" % name)
        assert master.poll() is None, "gunicorn exited"
    finally:
        try:
            os.killpg(master.pid, signal.SIGTERM)
            master.wait(timeout=60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        finally:
            try:
                os.killpg(master.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            master.wait()
            log.close()
            os.close(ready_read)
        print((tmp_path / "gunicorn.log").read_text(errors="replace"))
