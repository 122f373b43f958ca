#!/usr/bin/env python3
"""shmring.lua in a real nginx: 4 workers, each opening the ring once in
init_worker_by_lua_block, must answer 1,000 keys exactly as `ringctl lookup` does,
and follow `ringctl add` and `remove` on their next request.

Run by ctest (lua_nginx_workers). Exits 77 (skipped) when nginx or its Lua module
is missing. nginx runs in the foreground in its own process group, on a free
loopback port, with its pid file, logs and temporary files in a temporary
directory; it is stopped and everything is removed whatever happens.
"""

import ctypes
import http.client
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

import nginx_harness

WORKERS = 4
KEYS = 1000

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
    client_body_buffer_size 1m;
    client_max_body_size 1m;
    keepalive_requests 100000;
    keepalive_timeout 300s;

    lua_package_path "{lua_tree}/?.lua;;";

    # One handle per worker, opened when the worker starts and kept for its life.
    init_worker_by_lua_block {{
        local shmring = require "shmring"
        local ring, err = shmring.open("{ring}")
        if not ring then
            ngx.log(ngx.ERR, "cannot open ring {ring}: ", err)
        end
        package.loaded.routing_ring = ring
    }}

    server {{
        listen 127.0.0.1:{port} reuseport;

        # GET /route?key=K -> "pid<TAB>generation<TAB>name<TAB>address"
        location = /route {{
            content_by_lua_block {{
                local ring = package.loaded.routing_ring
                if not ring then
                    return ngx.exit(500)
                end
                local node, err = ring:lookup(ngx.var.arg_key or "")
                if not node then
                    ngx.status = 503
                    ngx.say(err)
                    return
                end
                ngx.say(ngx.worker.pid(), "\t", ring:generation(), "\t", node.name,
                        "\t", node.address)
            }}
        }}

        # POST /batch with one key a line -> the worker's pid and generation, then
        # "key<TAB>name<TAB>address" a line, as `ringctl lookup` prints them.
        location = /batch {{
            content_by_lua_block {{
                local ring = package.loaded.routing_ring
                if not ring then
                    return ngx.exit(500)
                end
                ngx.req.read_body()
                local out = {{}}
                for key in (ngx.req.get_body_data() or ""):gmatch("[^\n]+") do
                    local node, err = ring:lookup(key)
                    if not node then
                        ngx.status = 503
                        ngx.say(err)
                        return
                    end
                    out[#out + 1] = key .. "\t" .. node.name .. "\t" .. node.address
                end
                ngx.say(ngx.worker.pid(), "\t", ring:generation())
                ngx.print(table.concat(out, "\n"), "\n")
            }}
        }}
    }}
}}
"""


class Failure(Exception):
    pass


def die_with_parent():
    """Runs in the child before exec: nginx's master is killed if this script dies
    without its cleanup (SIGKILL on a ctest timeout)."""
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


class Test:
    def __init__(self, args):
        self.args = args
        self.ring = "lua-nginx-%d" % os.getpid()
        self.tmp = tempfile.mkdtemp(prefix="shmring-nginx-")
        self.nginx = None
        self.port = None
        self.connections = {}  # worker pid -> keep-alive connection to it

    def ringctl(self, *argv):
        result = subprocess.run([self.args.ringctl, "-r", self.ring, *argv],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise Failure("ringctl %s: %s" % (" ".join(argv), result.stderr))
        return result.stdout

    def expected(self, keys):
        return self.ringctl("lookup", *keys)

    def generation(self):
        for line in self.ringctl("show").splitlines():
            if line.startswith("generation:"):
                return int(line.split()[1])
        raise Failure("ringctl show printed no generation")

    def error_log(self):
        try:
            with open(os.path.join(self.tmp, "error.log")) as f:
                return f.read()
        except OSError:
            return ""

    def start(self):
        user = ""
        if os.geteuid() == 0:
            # Workers run as nobody, as Debian's nginx would run them as www-data:
            # another user than the ring's owner (root, trusted by every reader).
            os.chmod(self.tmp, 0o755)
            if all(readable_by_others(p) for p in
                   (os.path.join(self.args.lua_tree, "shmring.lua"),
                    self.args.library)):
                user = "user nobody nogroup;"
            else:
                user = "user root root;"
            print("# workers run as %s" % user.split()[1].rstrip(";"))
        for attempt in range(5):
            self.port = free_port()
            conf = CONF.format(modules=self.args.modules, user=user, workers=WORKERS,
                               tmp=self.tmp, lua_tree=self.args.lua_tree,
                               ring=self.ring, port=self.port)
            conf_path = os.path.join(self.tmp, "nginx.conf")
            with open(conf_path, "w") as f:
                f.write(conf)
            env = dict(os.environ, SHMRING_LIBRARY=self.args.library)
            self.nginx = subprocess.Popen(
                [self.args.nginx, "-p", self.tmp, "-c", conf_path,
                 "-e", os.path.join(self.tmp, "error.log")],
                env=env, start_new_session=True, preexec_fn=die_with_parent,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if self.nginx.poll() is not None:
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

    def stop(self):
        if self.nginx is None:
            return
        if self.nginx.poll() is None:
            try:
                os.killpg(self.nginx.pid, signal.SIGTERM)
                self.nginx.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.nginx.pid, signal.SIGKILL)
                self.nginx.wait()
            except ProcessLookupError:
                pass
        self.nginx.stderr.close()
        self.nginx = None

    def request(self, conn, method, path, body=None):
        conn.request(method, path, body=body)
        response = conn.getresponse()
        text = response.read().decode()
        if response.status != 200:
            raise Failure("%s %s: HTTP %d: %s\n%s" % (
                method, path, response.status, text, self.error_log()))
        return text

    def find_workers(self):
        """Keeps one keep-alive connection to each worker (reuseport spreads new
        connections over the workers' sockets); gives up after 1,000 tries."""
        for _ in range(1000):
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            pid = int(self.request(conn, "GET", "/route?key=probe").split("\t")[0])
            if pid in self.connections:
                conn.close()
            else:
                self.connections[pid] = conn
                if len(self.connections) == WORKERS:
                    return
        raise Failure("saw only workers %s" % sorted(self.connections))

    def check_workers(self, keys, what):
        expected = self.expected(keys)
        generation = self.generation()
        for pid, conn in sorted(self.connections.items()):
            # The first request on each worker after the change: it must already
            # answer from the new version.
            first = self.request(conn, "GET", "/route?key=" + keys[0])
            wpid, wgeneration, name, address = first.rstrip("\n").split("\t")
            if int(wpid) != pid or int(wgeneration) != generation:
                raise Failure("%s: worker %d answered %r, expected generation %d" % (
                    what, pid, first, generation))
            if "%s\t%s\t%s\n" % (keys[0], name, address) != expected.splitlines(True)[0]:
                raise Failure("%s: worker %d routed %s to %s" % (what, pid, keys[0], name))
            text = self.request(conn, "POST", "/batch", "\n".join(keys) + "\n")
            header, _, answers = text.partition("\n")
            if header != "%d\t%d" % (pid, generation):
                raise Failure("%s: batch answered by %r" % (what, header))
            if answers != expected:
                got = answers.splitlines()
                want = expected.splitlines()
                diff = [(g, w) for g, w in zip(got, want) if g != w][:5]
                raise Failure("%s: worker %d disagrees with ringctl (%d lines vs %d): %s"
                              % (what, pid, len(got), len(want), diff))
        print("ok - %s: %d workers answer %d keys as ringctl (generation %d)" % (
            what, len(self.connections), len(keys), generation))

    def check_readme_config(self):
        """The README's nginx.conf, presented as a whole file, is one nginx accepts
        (`nginx -t`): with Debian's modules-enabled include, its Lua directives are
        known."""
        readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                              "README.md")
        text = open(readme, encoding="utf-8").read()
        start = text.index("```nginx\n") + len("```nginx\n")
        path = os.path.join(self.tmp, "readme-nginx.conf")
        with open(path, "w") as conf:
            conf.write(text[start:text.index("```", start)])
        result = subprocess.run(
            [self.args.nginx, "-t", "-c", path, "-e", os.path.join(self.tmp, "readme-t.log")],
            capture_output=True, text=True)
        if result.returncode != 0:
            raise Failure("nginx -t of the README's nginx.conf: " + result.stderr)

    def run(self):
        self.check_readme_config()
        self.ringctl("init")
        for i in range(1, 6):
            self.ringctl("add", "cache-%d" % i, "10.1.0.%d:11211" % i)
        self.start()
        self.find_workers()
        rng = random.Random(11)
        keys = ["user:%d:%x" % (i, rng.getrandbits(48)) for i in range(KEYS)]
        self.check_workers(keys, "initial")
        self.ringctl("add", "cache-6", "10.1.0.6:11211", "--weight", "3")
        self.check_workers(keys, "after add")
        self.ringctl("remove", "cache-2")
        self.check_workers(keys, "after remove")
        self.ringctl("down", "cache-4")
        self.check_workers(keys, "after down")
        # Every worker must still be the one that started: none crashed.
        if len(self.connections) != WORKERS:
            raise Failure("lost workers")
        if "[alert]" in self.error_log() or "[error]" in self.error_log():
            raise Failure("nginx logged errors:\n" + self.error_log())

    def cleanup(self):
        for conn in self.connections.values():
            conn.close()
        self.stop()
        subprocess.run([self.args.ringctl, "-r", self.ring, "destroy"],
                       capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(nginx_harness.run(__doc__, Test, Failure))
