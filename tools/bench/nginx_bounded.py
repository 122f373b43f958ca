#!/usr/bin/env python3
"""Bounded loads in a real nginx: each backend's peak concurrency, with and without
the bound.

nginx runs 4 workers, each its own process with its own ring handle. Every request
takes a lease with the Lua binding in the access phase (`ring:acquire(key)`),
is proxied to the leased node, and gives the lease back in the log phase. The nodes
are small HTTP backends on loopback (one asyncio loop in this process), each holding
every request for a fixed time and recording its own peak concurrency. wrk sends a
Zipf-distributed key stream (a few hot keys) over N keep-alive connections.

Two runs on one ring: the balance factor C (bounded), then the same board with no
balance factor (each request to its key's first candidate; the board still counts).

The bound. A lease goes to the first of its key's candidates whose in-flight count is
below ceil(C x (in-flight requests of the ring + 1) x w / W), w its weight and W the
sum of the up nodes' weights (docs/bounded-loads.md); with at most 64 up nodes every
node is a candidate, and those capacities sum to at least C x (in flight + 1), more
than the ring's in-flight count, so some candidate is below its capacity. Each
connection has at most one request in nginx at a time (a worker runs a request's log
phase before it reads the connection's next request), so an acquire sees at most
N - 1 others in flight, and no node is ever given more than ceil(C x N x w / W)
leases; with equal weights, ceil(C x N / n) for n nodes. A backend sees a request
only between its lease's acquire and release, so that is the ceiling of every
backend's peak. Without a balance factor nothing bounds it.

    python3 tools/bench/nginx_bounded.py --build build

prints the table; --check (the suite's shortened run, with --seconds 3) exits 1
unless every bounded peak is within the ceiling and the unbounded run exceeds it.
Exits 77 when nginx, its Lua module or wrk is missing.
"""

import argparse
import asyncio
import ctypes
import json
import math
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

WORKERS = 4

CONF = r"""
load_module {modules}/ndk_http_module.so;
load_module {modules}/ngx_http_lua_module.so;

{user}
master_process on;
worker_processes {workers};
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
env SHMRING_LIBRARY;

events {{
    worker_connections 4096;
}}

http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    proxy_read_timeout 300s;
    lua_package_path "{lua_tree}/?.lua;;";

    init_worker_by_lua_block {{
        local ring, err = require("shmring").open("{ring}")
        if not ring then
            ngx.log(ngx.ERR, "cannot open ring {ring}: ", err)
        end
        package.loaded.bounded_ring = ring
    }}

    server {{
        listen 127.0.0.1:{port} reuseport backlog=4096;

        location / {{
            set $backend "";
            access_by_lua_block {{
                local ring = package.loaded.bounded_ring
                local lease, err = ring:acquire(ngx.var.arg_key or "")
                if not lease then
                    ngx.log(ngx.ERR, err)
                    return ngx.exit(503)
                end
                ngx.ctx.lease = lease
                ngx.var.backend = lease.node.address
            }}
            proxy_pass http://$backend;
            log_by_lua_block {{
                local lease = ngx.ctx.lease
                if lease then
                    package.loaded.bounded_ring:release(lease)
                end
            }}
        }}
    }}
}}
"""

# wrk's script: keys k1..kK drawn from a Zipf distribution of exponent S (k1 the
# hottest), from a generator seeded by the thread's number.
WRK_SCRIPT = r"""
local keys, s = {keys}, {zipf}
local cumulative, total = {{}}, 0
for i = 1, keys do
    total = total + 1 / i ^ s
    cumulative[i] = total
end
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("seed", counter)
end
function init()
    math.randomseed(seed * 7919)
end
function request()
    local u = math.random() * total
    local lo, hi = 1, keys
    while lo < hi do
        local mid = math.floor((lo + hi) / 2)
        if cumulative[mid] < u then lo = mid + 1 else hi = mid end
    end
    return wrk.format("GET", "/?key=k" .. lo)
end
"""


class Failure(Exception):
    pass


def die_with_parent():
    """Runs in a child before exec: it is killed if this script dies without its
    cleanup (SIGKILL on a ctest timeout)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def readable_by_others(path):
    """Whether a worker running as `nobody` can read PATH (and reach it)."""
    path = os.path.realpath(path)
    parts = path.split("/")
    for i in range(2, len(parts) + 1):
        mode = os.stat("/".join(parts[:i]) or "/").st_mode
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return False
    return bool(os.stat(path).st_mode & stat.S_IROTH)


class Backends:
    """COUNT HTTP backends on loopback in one asyncio loop on a thread of its own.
    Each answers every request after HOLD seconds and records its concurrency (from
    reading the request to writing the answer), its peak, its requests, and how
    many of them were for the hottest key."""

    def __init__(self, count, hold, hot_key):
        self.count, self.hold, self.hot_request = count, hold, b"key=%s " % hot_key
        self.ports = []
        self.loop = asyncio.new_event_loop()
        self.servers = []
        self.reset()
        ready = threading.Event()
        self.thread = threading.Thread(target=self.run, args=(ready,), daemon=True)
        self.thread.start()
        if not ready.wait(30) or len(self.ports) != count:
            raise Failure("the backends did not start")

    def reset(self):
        self.in_flight = [0] * self.count
        self.peak = [0] * self.count
        self.requests = [0] * self.count
        self.hot = [0] * self.count

    def protocol(self, index):
        backends = self

        class Backend(asyncio.Protocol):
            def connection_made(self, transport):
                self.transport, self.buffer, self.counted = transport, b"", False

            def data_received(self, data):
                self.buffer += data
                if self.counted or b"\r\n\r\n" not in self.buffer:
                    return
                self.counted = True
                backends.in_flight[index] += 1
                backends.peak[index] = max(backends.peak[index], backends.in_flight[index])
                backends.requests[index] += 1
                if backends.hot_request in self.buffer.split(b"\r\n", 1)[0] + b" ":
                    backends.hot[index] += 1
                backends.loop.call_later(backends.hold, self.answer)

            def answer(self):
                if self.counted:
                    self.counted = False
                    backends.in_flight[index] -= 1
                    body = b"backend %d\n" % index
                    self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                                         b"Connection: close\r\n\r\n%s" % (len(body), body))
                    self.transport.close()

            def connection_lost(self, exc):
                if self.counted:
                    self.counted = False
                    backends.in_flight[index] -= 1

        return Backend

    def run(self, ready):
        asyncio.set_event_loop(self.loop)
        for index in range(self.count):
            server = self.loop.run_until_complete(self.loop.create_server(
                self.protocol(index), "127.0.0.1", 0, backlog=4096))
            self.servers.append(server)
            self.ports.append(server.sockets[0].getsockname()[1])
        ready.set()
        self.loop.run_forever()

    def snapshot(self):
        """The counters, read on the loop's own thread."""
        done = threading.Event()
        result = {}

        def read():
            result.update(peak=list(self.peak), requests=list(self.requests),
                          hot=list(self.hot), in_flight=list(self.in_flight))
            done.set()
        self.loop.call_soon_threadsafe(read)
        if not done.wait(30):
            raise Failure("the backends' loop does not answer")
        return result

    def clear(self):
        done = threading.Event()

        def clear():
            self.reset()
            done.set()
        self.loop.call_soon_threadsafe(clear)
        done.wait(30)

    def stop(self):
        def stop():
            for server in self.servers:
                server.close()
            self.loop.stop()
        self.loop.call_soon_threadsafe(stop)
        self.thread.join(30)


class Nginx:
    """nginx in the foreground in its own process group, its pid file, logs and
    temporary files in TMP; stop() ends it whatever happened."""

    def __init__(self, args, tmp, conf_template, **fields):
        self.args, self.tmp, self.process, self.port = args, tmp, None, None
        self.user = ""
        if os.geteuid() == 0:
            # Workers run as nobody, as Debian's nginx would run them as www-data:
            # another user than the ring's owner (root), who writes the board as a
            # member of the ring's workers group (nogroup).
            os.chmod(tmp, 0o755)
            if all(readable_by_others(p) for p in
                   (os.path.join(args.lua_tree, "shmring.lua"), args.library)):
                self.user = "user nobody nogroup;"
            else:
                self.user = "user root root;"
        for attempt in range(5):
            self.port = free_port()
            conf = conf_template.format(modules=args.modules, user=self.user,
                                        workers=WORKERS, tmp=tmp,
                                        lua_tree=args.lua_tree, port=self.port, **fields)
            conf_path = os.path.join(tmp, "nginx.conf")
            with open(conf_path, "w") as f:
                f.write(conf)
            env = dict(os.environ, SHMRING_LIBRARY=args.library)
            self.process = subprocess.Popen(
                [args.nginx, "-p", tmp, "-c", conf_path, "-e",
                 os.path.join(tmp, "error.log")],
                env=env, start_new_session=True, preexec_fn=die_with_parent,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    break
                try:
                    socket.create_connection(("127.0.0.1", self.port), 1).close()
                    return
                except OSError:
                    time.sleep(0.02)
            log = self.error_log()
            self.stop()
            if "Address already in use" not in log:
                raise Failure("nginx did not start:\n" + log)
        raise Failure("no free port for nginx after 5 attempts")

    def workers_group(self):
        """The group the workers run in, which the ring's board must be for."""
        if self.user:
            return self.user.split()[2].rstrip(";")
        return str(os.getegid())

    def error_log(self):
        try:
            with open(os.path.join(self.tmp, "error.log")) as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            except ProcessLookupError:
                pass
        self.process = None


def workers_group_for(args):
    """The group nginx's workers will run in (Nginx decides it the same way)."""
    if os.geteuid() == 0:
        if all(readable_by_others(p) for p in
               (os.path.join(args.lua_tree, "shmring.lua"), args.library)):
            return "nogroup"
        return "root"
    return str(os.getegid())


class Bench:
    def __init__(self, args):
        self.args = args
        self.ring = "nginx-bounded-%d" % os.getpid()
        self.tmp = tempfile.mkdtemp(prefix="shmring-nginx-bounded-")
        self.backends = None
        self.nginx = None

    def ringctl(self, *argv):
        result = subprocess.run([self.args.ringctl, "-r", self.ring, *argv],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise Failure("ringctl %s: %s" % (" ".join(argv), result.stderr))
        return result.stdout

    def board(self):
        shown = json.loads(self.ringctl("--json", "show"))
        return shown["board"]

    def load(self):
        """One run of wrk; returns what wrk and the backends counted."""
        self.backends.clear()
        before = self.board()
        script = os.path.join(self.tmp, "keys.lua")
        with open(script, "w") as f:
            f.write(WRK_SCRIPT.format(keys=self.args.keys, zipf=self.args.zipf))
        command = [self.args.wrk, "-t", "2", "-c", str(self.args.connections),
                   "-d", "%ds" % self.args.seconds, "--timeout", "60s", "-s", script,
                   "http://127.0.0.1:%d/" % self.nginx.port]
        result = subprocess.run(command, capture_output=True, text=True,
                                timeout=self.args.seconds + 120,
                                preexec_fn=die_with_parent)
        if result.returncode != 0:
            raise Failure("wrk failed: %s%s" % (result.stdout, result.stderr))
        if re.search(r"Socket errors|Non-2xx", result.stdout):
            raise Failure("wrk saw errors (the bound assumes none):\n%s\n%s" % (
                result.stdout, self.nginx.error_log()))
        requests = int(re.search(r"(\d+) requests in", result.stdout).group(1))
        # Every lease is given back once nginx has logged the last requests.
        deadline = time.monotonic() + 30
        while self.board()["in_flight"] != 0:
            if time.monotonic() > deadline:
                raise Failure("leases left on the board: %s" % self.board())
            time.sleep(0.05)
        after = self.board()
        counts = self.backends.snapshot()
        counts["wrk_requests"] = requests
        counts["acquires"] = after["acquires"] - before["acquires"]
        counts["first_candidate"] = after["first_candidate"] - before["first_candidate"]
        counts["in_flight_after"] = after["in_flight"]
        return counts

    def run(self):
        args = self.args
        self.backends = Backends(args.backends, args.hold_ms / 1000.0, b"k1")
        group = workers_group_for(args)
        self.ringctl("init", "--workers-group", group, "--balance-factor",
                     args.balance_factor)
        nodes = {"nodes": [{"name": "backend-%d" % i, "address": "127.0.0.1:%d" % port}
                           for i, port in enumerate(self.backends.ports)]}
        nodeset = os.path.join(self.tmp, "nodes.json")
        with open(nodeset, "w") as f:
            json.dump(nodes, f)
        self.ringctl("load", nodeset)
        self.nginx = Nginx(args, self.tmp, CONF, ring=self.ring)
        if self.nginx.workers_group() != group:
            raise Failure("workers run in %s, the board is for %s" % (
                self.nginx.workers_group(), group))
        bounded = self.load()
        self.ringctl("board", group, "--balance-factor", "0")
        unbounded = self.load()
        return bounded, unbounded

    def cleanup(self):
        if self.nginx is not None:
            self.nginx.stop()
        if self.backends is not None:
            self.backends.stop()
        subprocess.run([self.args.ringctl, "-r", self.ring, "destroy"],
                       capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


def report(args, bounded, unbounded):
    """Prints the table; returns the ceiling."""
    n, c, connections = args.backends, float(args.balance_factor), args.connections
    ceiling = math.ceil(round(c * connections * 100) / n / 100)
    print("nginx, %d workers; %d backends of weight 1, each holding a request %d ms; "
          "wrk: %d connections, %d s a run, keys k1..k%d Zipf s = %s" % (
              WORKERS, n, args.hold_ms, connections, args.seconds, args.keys, args.zipf))
    print("ceiling per backend: ceil(C x N / n) = ceil(%s x %d / %d) = %d" % (
        args.balance_factor, connections, n, ceiling))
    print()
    print("| backend | bounded (C = %s): peak | requests | k1 | unbounded: peak | "
          "requests | k1 |" % args.balance_factor)
    print("|---|---|---|---|---|---|---|")
    for i in range(n):
        print("| backend-%d | %d | %d | %d | %d | %d | %d |" % (
            i, bounded["peak"][i], bounded["requests"][i], bounded["hot"][i],
            unbounded["peak"][i], unbounded["requests"][i], unbounded["hot"][i]))
    for name, run in (("bounded", bounded), ("unbounded", unbounded)):
        print("%s: highest peak %d (ceiling %d); %d requests answered to wrk, %d leases; "
              "first candidate took %.3f; board: %d in flight after the run" % (
                  name, max(run["peak"]), ceiling, run["wrk_requests"], run["acquires"],
                  run["first_candidate"] / max(run["acquires"], 1),
                  run["in_flight_after"]))
    return ceiling


def check(ceiling, bounded, unbounded):
    failures = []
    if max(bounded["peak"]) > ceiling:
        failures.append("bounded: a backend's peak %s exceeds the ceiling %d" % (
            bounded["peak"], ceiling))
    if max(unbounded["peak"]) <= ceiling:
        failures.append("unbounded: no backend's peak %s exceeds the ceiling %d" % (
            unbounded["peak"], ceiling))
    # Deterministic, whatever the timing: without a balance factor every request for
    # the hottest key goes to its first candidate; with one, the key overflows.
    if sorted(unbounded["hot"])[-2] != 0:
        failures.append("unbounded: k1 went to more than one backend: %s" %
                        unbounded["hot"])
    if sorted(bounded["hot"])[-2] == 0:
        failures.append("bounded: k1 never left its first candidate: %s" % bounded["hot"])
    for name, run in (("bounded", bounded), ("unbounded", unbounded)):
        # Every lease is one request that reached its backend (wrk counts only those
        # it read an answer to before it stopped).
        if run["acquires"] != sum(run["requests"]) or run["acquires"] < run["wrk_requests"]:
            failures.append("%s: %d leases, %d requests at the backends, %d answered" % (
                name, run["acquires"], sum(run["requests"]), run["wrk_requests"]))
    return failures


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(here, os.pardir, os.pardir, "build"),
                        help="the build directory (default: build)")
    parser.add_argument("--nginx", default="nginx")
    parser.add_argument("--modules", default="/usr/lib/nginx/modules")
    parser.add_argument("--wrk", default="wrk")
    parser.add_argument("--backends", type=int, default=4)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--hold-ms", type=int, default=50)
    parser.add_argument("--balance-factor", default="1.25")
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--zipf", default="1.5")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless the bounded run stays within the ceiling "
                             "and the unbounded run exceeds it")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    args.ringctl = os.path.join(build, "tools", "ringctl")
    args.library = os.path.join(build, "lib", "libshmring.so.0")
    args.lua_tree = os.path.join(build, "bindings", "lua", "lua")
    for path in (args.ringctl, args.library, os.path.join(args.lua_tree, "shmring.lua")):
        if not os.path.exists(path):
            print("nginx_bounded: %s is missing: build first (cmake --build %s)" % (
                path, args.build), file=sys.stderr)
            return 2
    for module in ("ndk_http_module.so", "ngx_http_lua_module.so"):
        if not os.path.exists(os.path.join(args.modules, module)):
            print("skipped: %s/%s is missing (Debian: libnginx-mod-http-lua)" % (
                args.modules, module))
            return 77
    for program in ("nginx", "wrk"):
        found = shutil.which(getattr(args, program)) or (
            program == "nginx" and shutil.which("/usr/sbin/nginx"))
        if not found:
            print("skipped: no %s (Debian: %s)" % (program, program))
            return 77
        setattr(args, program, found)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    bench = Bench(args)
    try:
        results = bench.run()
    except Failure as e:
        print("nginx_bounded: %s" % e, file=sys.stderr)
        return 1
    finally:
        bench.cleanup()
    ceiling = report(args, *results)
    if args.check:
        failures = check(ceiling, *results)
        for failure in failures:
            print("not ok - %s" % failure, file=sys.stderr)
        if failures:
            return 1
        print("ok - every bounded peak within %d, the unbounded run above it" % ceiling)
    return 0


if __name__ == "__main__":
    sys.exit(main())
