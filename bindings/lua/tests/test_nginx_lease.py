#!/usr/bin/env python3
"""Leases in a real nginx: 4 workers acquire in the access phase (ngx.ctx keeps the
lease) and release in the log phase, and the board is back at zero in flight after
requests that succeed, fail in the content handler (a Lua error, ngx.exit(500)),
are refused in the access phase after the acquire, or that the client aborts while
nginx waits on a backend or sleeps; after an internal redirect (which clears ngx.ctx)
the lost lease comes back through its finalizer once the worker collects garbage.

Run by ctest (lua_nginx_lease). Exits 77 (skipped) when nginx or its Lua module is
missing. nginx (from tools/bench/nginx_bounded.py's Nginx) runs in the foreground
in its own process group on a free loopback port; it, the backend and the ring are
removed whatever happens.
"""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                os.pardir, os.pardir, "tools", "bench"))
from nginx_bounded import Failure, Nginx, workers_group_for  # noqa: E402

import nginx_harness  # noqa: E402

CONF = r"""
load_module {modules}/ndk_http_module.so;
load_module {modules}/ngx_http_lua_module.so;

{user}
master_process on;
worker_processes {workers};
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log notice;
env SHMRING_LIBRARY;

events {{
    worker_connections 256;
}}

http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    keepalive_requests 100000;
    keepalive_timeout 300s;
    proxy_read_timeout 300s;
    lua_package_path "{lua_tree}/?.lua;;";

    init_worker_by_lua_block {{
        local ring, err = require("shmring").open("{ring}")
        if not ring then
            ngx.log(ngx.ERR, "cannot open ring {ring}: ", err)
        end
        package.loaded.lease_ring = ring
    }}

    server {{
        listen 127.0.0.1:{port} reuseport;

        # Every location inherits these two: one lease a request, from the access
        # phase to the log phase, which runs for every request.
        access_by_lua_block {{
            local lease, err = package.loaded.lease_ring:acquire(ngx.var.arg_key or "")
            if not lease then
                ngx.log(ngx.ERR, err)
                return ngx.exit(503)
            end
            ngx.ctx.lease = lease
            if ngx.var.arg_refuse then
                return ngx.exit(403)
            end
        }}
        log_by_lua_block {{
            local lease = ngx.ctx.lease
            if lease then
                local ok, err = package.loaded.lease_ring:release(lease)
                if not ok then
                    ngx.log(ngx.ERR, "release: ", err)
                end
            end
        }}

        location = /ok {{
            content_by_lua_block {{
                ngx.say(ngx.worker.pid(), "\t", ngx.ctx.lease.node.name)
            }}
        }}
        location = /error {{
            content_by_lua_block {{
                error("the handler failed")
            }}
        }}
        location = /exit500 {{
            content_by_lua_block {{
                return ngx.exit(500)
            }}
        }}
        location = /slow {{
            proxy_pass http://127.0.0.1:{backend_port};
        }}
        location = /sleep {{
            lua_check_client_abort on;
            content_by_lua_block {{
                ngx.sleep(300)
                ngx.say("slept")
            }}
        }}
        location = /redirect {{
            content_by_lua_block {{
                return ngx.exec("/ok")
            }}
        }}
        location = /collect {{
            access_by_lua_block {{ }}
            log_by_lua_block {{ }}
            content_by_lua_block {{
                collectgarbage()
                collectgarbage()
                ngx.say(ngx.worker.pid())
            }}
        }}
    }}
}}
"""


class SlowBackend:
    """A backend on loopback that reads each request and never answers: nginx waits
    on it until the client goes away. Counts the requests it read."""

    def __init__(self):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.received = 0
        self.connections = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            with self.lock:
                self.connections.append(conn)
                self.received += 1

    def stop(self):
        self.listener.close()
        with self.lock:
            for conn in self.connections:
                conn.close()


def wait_for(what, condition, seconds=60):
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure("timed out waiting for %s" % what)
        time.sleep(0.02)


class Test:
    def __init__(self, args):
        self.args = args
        self.ring = "lua-nginx-lease-%d" % os.getpid()
        self.tmp = tempfile.mkdtemp(prefix="shmring-nginx-lease-")
        self.nginx = None
        self.backend = None

    def ringctl(self, *argv):
        result = subprocess.run([self.args.ringctl, "-r", self.ring, *argv],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise Failure("ringctl %s: %s" % (" ".join(argv), result.stderr))
        return result.stdout

    def board(self):
        return json.loads(self.ringctl("--json", "show"))["board"]

    def get(self, conn, path, status):
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read().decode()
        if response.status != status:
            raise Failure("GET %s: HTTP %d, expected %d: %s\n%s" % (
                path, response.status, status, body, self.nginx.error_log()))
        return body

    def abort(self, path, started):
        """Sends PATH, waits until STARTED() says nginx holds its lease, then closes
        the connection without reading an answer."""
        client = socket.create_connection(("127.0.0.1", self.nginx.port), 30)
        client.sendall(b"GET %s HTTP/1.1\r\nHost: test\r\n\r\n" % path.encode())
        wait_for("%s in flight" % path, started)
        client.close()

    def run(self):
        group = workers_group_for(self.args)
        self.ringctl("init", "--workers-group", group, "--balance-factor", "1.25")
        for i in range(1, 4):
            self.ringctl("add", "node-%d" % i, "10.2.0.%d:80" % i)
        self.backend = SlowBackend()
        self.nginx = Nginx(self.args, self.tmp, CONF, ring=self.ring,
                           backend_port=self.backend.port)
        print("# workers run in group %s" % self.nginx.workers_group())
        conn = http.client.HTTPConnection("127.0.0.1", self.nginx.port, timeout=60)
        expected = 0
        for i in range(200):
            self.get(conn, "/ok?key=user:%d" % i, 200)
        expected += 200
        for i in range(20):
            self.get(conn, "/error?key=user:%d" % i, 500)
            self.get(conn, "/exit500?key=user:%d" % i, 500)
            self.get(conn, "/ok?key=user:%d&refuse=1" % i, 403)
        expected += 60
        board = self.board()
        if board["in_flight"] != 0 or board["acquires"] != expected:
            raise Failure("after %d requests, in flight and acquires: %s" % (expected,
                                                                              board))
        if board["workers"] < 1:
            raise Failure("no worker holds a slot of the board: %s" % board)
        print("ok - %d requests (60 of them 500 or 403), 0 in flight" % expected)

        # Client aborts: nginx waiting on a backend (499), and sleeping in Lua with
        # lua_check_client_abort. Each lease is counted while the request waits.
        for round_ in range(5):
            received = self.backend.received
            self.abort("/slow?key=slow-%d" % round_,
                       lambda: self.backend.received > received)
            expected += 1
            if self.board()["acquires"] != expected:
                raise Failure("the aborted request was not counted: %s" % self.board())
            wait_for("the aborted request's release", lambda: self.board()["in_flight"] == 0)
            self.abort("/sleep?key=sleep-%d" % round_,
                       lambda: self.board()["in_flight"] == 1)
            expected += 1
            wait_for("the aborted sleep's release", lambda: self.board()["in_flight"] == 0)
        if self.board()["acquires"] != expected:
            raise Failure("acquires after the aborts: %s" % self.board())
        print("ok - 10 client aborts, every lease released")

        # An internal redirect clears ngx.ctx: the first lease is lost, and counts
        # until the worker's garbage collector runs its finalizer. The same keep-alive
        # connection reaches the same worker.
        self.get(conn, "/redirect?key=lost", 200)
        expected += 2
        board = self.board()
        if board["in_flight"] != 1 or board["acquires"] != expected:
            raise Failure("after the redirect, expected 1 lost lease: %s" % board)
        self.get(conn, "/collect", 200)
        board = self.board()
        if board["in_flight"] != 0:
            raise Failure("the finalizer did not release the lost lease: %s" % board)
        print("ok - a lease lost by an internal redirect comes back when collected")
        conn.close()
        log = self.nginx.error_log()
        if "[alert]" in log or "release: " in log:
            raise Failure("nginx logged:\n" + log)
        if log.count("the handler failed") != 20:
            raise Failure("expected 20 handler errors in the log:\n" + log)

    def cleanup(self):
        if self.nginx is not None:
            self.nginx.stop()
        if self.backend is not None:
            self.backend.stop()
        subprocess.run([self.args.ringctl, "-r", self.ring, "destroy"],
                       capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(nginx_harness.run(__doc__, Test, Failure))
