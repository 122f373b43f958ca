#!/usr/bin/env python3
"""The PHP extension in a real php-fpm: a static pool of 4 workers on loopback, driven
over FastCGI with cgi-fcgi. Checks that every worker answers 1,000 keys exactly as
`ringctl lookup` does, follows `ringctl add` and `remove` on its next request, and
that a request after a worker's first one opens and maps nothing (its /proc/self/maps
and descriptor counts, and strace of one worker around a request). Then, with the
ring opened by php-fpm's master at module startup (shmring.preopen), before it forks:
every worker's first request finds the handle it inherited, answers right, and
follows the next change on its own. Last, leases (Shmring\\Lease) on a ring with a
load board: a batch of requests that end every way a request ends (release in a
finally block, an uncaught exception, a lease kept in a static or a global variable,
a fatal error, exit()) each counted one lease while it ran, and the board shows 0 in
flight after the batch, with the workers alive and holding their slots."""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

WORKERS = 4
KEYS = 1000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def brief(response):
    """A response without its 1,000 answers, for assertion messages."""
    return {k: v for k, v in response.items() if k != "answers"}


def wait_until(predicate, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.01)


class PortTaken(Exception):
    """php-fpm could not bind the port chosen for it."""


class Test:
    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp
        self.ring = "phpfpm-%d" % os.getpid()
        self.lease_ring = "phpfpm-lease-%d" % os.getpid()
        self.port = free_port()
        self.fpm = None
        self.rounds = 0
        # Whether php-fpm's master opens the ring at startup (shmring.preopen).
        self.preopen = False

    def ringctl(self, *argv):
        return subprocess.run([self.args.ringctl, "-r", self.ring, *argv], check=True,
                              capture_output=True, text=True).stdout

    def expected(self):
        out = self.ringctl("lookup", *["key-%d" % i for i in range(KEYS)])
        return [line.split("\t")[1:3] for line in out.splitlines()]

    def start_fpm(self):
        # The free port is chosen before php-fpm binds it, so another process may
        # take it meanwhile: then php-fpm exits saying so, and a new port is tried.
        for attempt in range(5):
            try:
                return self.start_fpm_on_port()
            except PortTaken:
                self.port = free_port()
        raise AssertionError("php-fpm found no free port in 5 tries: " + self.log())

    def start_fpm_on_port(self):
        # A log of this attempt only, so an earlier attempt's bind error is not read
        # as this one's.
        open(os.path.join(self.tmp, "php-fpm.log"), "w").close()
        conf = os.path.join(self.tmp, "php-fpm.conf")
        with open(conf, "w") as f:
            f.write(f"""[global]
error_log = {self.tmp}/php-fpm.log
pid = {self.tmp}/php-fpm.pid
daemonize = no

[test]
listen = 127.0.0.1:{self.port}
pm = static
pm.max_children = {WORKERS}
pm.max_requests = 0
clear_env = no
catch_workers_output = yes
""")
        argv = [self.args.php_fpm, "-n", "-d", "extension=" + self.args.extension,
                "-d", "display_errors=stderr", "-y", conf, "-F"]
        if self.preopen:
            argv[1:1] = ["-d", "shmring.preopen=" + self.ring]
        if os.geteuid() == 0:
            argv.append("-R")
        self.fpm = subprocess.Popen(argv, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def listening():
            if self.fpm.poll() is not None:
                if "Address already in use" in self.log():
                    raise PortTaken()
                raise AssertionError("php-fpm exited: " + self.log())
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_until(listening, "php-fpm to listen")
        # The master forks the static pool's workers as it starts; wait for all 4.
        wait_until(lambda: len(self.worker_pids()) == WORKERS, "4 php-fpm workers")

    def worker_pids(self):
        with open("/proc/%d/task/%d/children" % (self.fpm.pid, self.fpm.pid)) as f:
            return sorted(int(p) for p in f.read().split())

    def log(self):
        try:
            with open(os.path.join(self.tmp, "php-fpm.log")) as f:
                return f.read()
        except OSError:
            return ""

    def stop_fpm(self):
        if self.fpm is None or self.fpm.poll() is not None:
            return
        os.killpg(self.fpm.pid, signal.SIGTERM)
        try:
            self.fpm.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.fpm.pid, signal.SIGKILL)
            self.fpm.wait()

    def request_round(self):
        """Sends one request to each of the 4 workers at once: each request waits at a
        barrier until all 4 have arrived, so they are served by 4 different workers."""
        self.rounds += 1
        barrier = os.path.join(self.tmp, "barrier-%d" % self.rounds)
        os.mkdir(barrier)
        query = "ring=%s&count=%d&barrier=%s&parties=%d" % (self.ring, KEYS, barrier,
                                                            WORKERS)
        env = dict(os.environ, SCRIPT_FILENAME=self.args.script, REQUEST_METHOD="GET",
                   QUERY_STRING=query, SERVER_PROTOCOL="HTTP/1.1",
                   GATEWAY_INTERFACE="CGI/1.1")
        clients = [subprocess.Popen([self.args.cgi_fcgi, "-bind", "-connect",
                                     "127.0.0.1:%d" % self.port], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                   for _ in range(WORKERS)]
        responses = []
        for client in clients:
            out, err = client.communicate(timeout=60)
            _, _, body = out.partition(b"\r\n\r\n")
            try:
                responses.append(json.loads(body))
            except ValueError:
                raise AssertionError("bad response: %r %r\n%s" % (out, err, self.log()))
        for response in responses:
            assert "error" not in response, response
        pids = sorted(response["pid"] for response in responses)
        assert pids == self.worker_pids(), (pids, self.worker_pids())
        return {response["pid"]: response for response in responses}

    def check_answers(self, responses, step):
        expected = self.expected()
        generation = json.loads(self.ringctl("--json", "show"))["generation"]
        for pid, response in responses.items():
            assert response["generation"] == generation, (step, pid, response["generation"],
                                                          generation)
            wrong = sum(1 for a, b in zip(response["answers"], expected) if a != b)
            assert len(response["answers"]) == KEYS and wrong == 0, (step, pid, wrong)
        print("%s: %d workers %s, generation %d, %d keys each as ringctl lookup"
              % (step, len(responses), sorted(responses), generation, KEYS))

    def strace_request(self, pid):
        """Traces one worker's openat, mmap and munmap calls around a round of
        requests (one of which it serves) and returns the trace."""
        trace = os.path.join(self.tmp, "strace.log")
        tracer = subprocess.Popen(["strace", "-f", "-p", str(pid), "-o", trace,
                                   "-e", "trace=openat,open,mmap,munmap"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def attached():
            if tracer.poll() is not None:
                raise AssertionError("strace exited with %d" % tracer.returncode)
            with open("/proc/%d/status" % pid) as f:
                return any(line.startswith("TracerPid:") and line.split()[1] != "0"
                           for line in f)

        try:
            wait_until(attached, "strace to attach")
            responses = self.request_round()
        finally:
            tracer.send_signal(signal.SIGINT)
            tracer.wait(timeout=20)
        with open(trace) as f:
            return responses, f.read()

    @staticmethod
    def can_trace():
        if os.geteuid() == 0:
            return True
        try:
            with open("/proc/sys/kernel/yama/ptrace_scope") as f:
                return f.read().strip() == "0"
        except OSError:
            return True

    @staticmethod
    def ring_calls(trace):
        """The trace's openat calls of the ring's objects, and its file mappings."""
        ring_files = [line for line in trace.splitlines()
                      if any(name in line for name in
                             ("/dev/shm", "shmring.", '"control"', '"lock"', '"version.'))]
        file_maps = [line for line in trace.splitlines()
                     if re.match(r"\d+\s+mmap\(", line) and "MAP_ANONYMOUS" not in line]
        return ring_files, file_maps

    def check_trace(self, traced_pid):
        third, trace = self.strace_request(traced_pid)
        self.check_answers(third, "traced requests")
        ring_files, file_maps = self.ring_calls(trace)
        assert not ring_files and not file_maps, (ring_files, file_maps)
        opened = [line for line in trace.splitlines() if "openat(" in line]
        # The trace saw the request (its script and /proc files), so it was live.
        assert any(self.args.script in line for line in opened), opened
        print("traced worker %d: %d openat calls (%s), none of the ring's files; "
              "no file mapping" % (traced_pid, len(opened),
                                   ", ".join(sorted({l.split('"')[1] for l in opened
                                                     if '"' in l}))))

    def run(self):
        self.ringctl("init")
        nodes = {"nodes": [{"name": "cache-%02d" % i, "address": "10.0.0.%d:11211" % i}
                           for i in range(20)]}
        node_file = os.path.join(self.tmp, "nodes.json")
        with open(node_file, "w") as f:
            json.dump(nodes, f)
        self.ringctl("load", node_file)
        self.start_fpm()

        first = self.request_round()
        self.check_answers(first, "first requests")
        for pid, response in first.items():
            assert response["open_before"] == 0, (pid, brief(response))
            assert response["maps"] > 0, (pid, brief(response))

        second = self.request_round()
        self.check_answers(second, "second requests")
        for pid, response in second.items():
            # The handle is reused: the registry held it, and the request added no
            # mapping and no descriptor.
            assert response["open_before"] == 1, (pid, brief(response))
            assert response["maps"] == first[pid]["maps"], (pid, response["maps"],
                                                            first[pid]["maps"])
            assert response["fds"] == first[pid]["fds"], (pid, response["fds"],
                                                          first[pid]["fds"])
        print("second requests: no new mapping (%s maps lines) and no new descriptor"
              % sorted({r["maps"] for r in second.values()}))

        traced_pid = sorted(second)[0]
        if not self.can_trace():
            print("strace cannot attach to php-fpm's workers here (not root, "
                  "kernel.yama.ptrace_scope > 0): the maps and descriptor counts above "
                  "are the proof")
        else:
            self.check_trace(traced_pid)

        self.ringctl("add", "cache-new", "10.0.1.1:11211", "--weight", "3")
        if self.can_trace():
            # The control: the request that first sees a new version maps it, and
            # the same trace shows it.
            responses, trace = self.strace_request(traced_pid)
            self.check_answers(responses, "after ringctl add")
            ring_files, file_maps = self.ring_calls(trace)
            assert any('"version.' in line for line in ring_files) and file_maps, trace
            print("traced worker %d, the request after ringctl add: %s"
                  % (traced_pid, "; ".join(l.split(None, 1)[1] for l in ring_files + file_maps)))
        else:
            self.check_answers(self.request_round(), "after ringctl add")
        self.ringctl("remove", "cache-03")
        self.check_answers(self.request_round(), "after ringctl remove")
        self.ringctl("down", "cache-05")
        after = self.request_round()
        self.check_answers(after, "after ringctl down")
        for pid, response in after.items():
            assert response["open_before"] == 1, (pid, brief(response))

        # The master opens the ring before it forks: each worker's first request
        # finds the handle it inherited (the registry holds it before the request
        # constructs a Ring), and each worker's copy follows new versions by itself.
        self.stop_fpm()
        self.preopen = True
        self.start_fpm()
        inherited = self.request_round()
        self.check_answers(inherited, "master-opened ring, first requests")
        for pid, response in inherited.items():
            assert response["open_before"] == 1, (pid, brief(response))
        self.ringctl("add", "cache-late", "10.0.2.1:11211")
        self.check_answers(self.request_round(), "master-opened ring, after ringctl add")
        self.ringctl("remove", "cache-new")
        self.check_answers(self.request_round(), "master-opened ring, after ringctl remove")

        self.check_leases()

    def lease_request(self, mode, key):
        """One request of the lease script (sequential: nothing else in flight)."""
        query = "ring=%s&ringctl=%s&mode=%s&key=%s" % (self.lease_ring, self.args.ringctl,
                                                       mode, key)
        env = dict(os.environ, SCRIPT_FILENAME=self.args.lease_script,
                   REQUEST_METHOD="GET", QUERY_STRING=query, SERVER_PROTOCOL="HTTP/1.1",
                   GATEWAY_INTERFACE="CGI/1.1")
        out = subprocess.run([self.args.cgi_fcgi, "-bind", "-connect",
                              "127.0.0.1:%d" % self.port], env=env, capture_output=True,
                             timeout=60).stdout
        _, _, body = out.partition(b"\r\n\r\n")
        try:
            return json.loads(body.splitlines()[0])
        except (ValueError, IndexError):
            raise AssertionError("bad response to %s: %r\n%s" % (mode, out, self.log()))

    def check_leases(self):
        subprocess.run([self.args.ringctl, "-r", self.lease_ring, "init", "--workers-group",
                        str(os.getgid()), "--balance-factor", "1.25"], check=True,
                       capture_output=True)
        for i in range(4):
            subprocess.run([self.args.ringctl, "-r", self.lease_ring, "add", "app-%d" % i,
                            "10.0.3.%d:80" % i], check=True, capture_output=True)
        modes = ["release", "throw", "static", "global", "fatal", "exit"]
        served = set()
        requests = 0
        for round_ in range(4):
            for mode in modes:
                response = self.lease_request(mode, "key-%d" % requests)
                requests += 1
                # Nothing else is in flight: this request's lease alone is counted.
                assert response["counted"] and response["in_flight"] == 1, (mode, response)
                served.add(response["pid"])
        board = json.loads(subprocess.run(
            [self.args.ringctl, "-r", self.lease_ring, "--json", "show"], check=True,
            capture_output=True, text=True).stdout)["board"]
        # The workers are alive (a static pool, no max_requests), so no count was
        # given back by a sweep of a dead worker's slot: each request's end did it.
        assert set(self.worker_pids()) >= served, (served, self.worker_pids())
        assert board["in_flight"] == 0 and board["acquires"] == requests \
            and board["workers"] == len(served) and board["reclaimed"] == 0, board
        print("leases: %d requests (%s) on %d workers, 0 in flight after them"
              % (requests, ", ".join(modes), len(served)))

    def cleanup(self):
        self.stop_fpm()
        for ring in (self.ring, self.lease_ring):
            subprocess.run([self.args.ringctl, "-r", ring, "destroy"],
                           capture_output=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--php-fpm", required=True)
    parser.add_argument("--cgi-fcgi", required=True)
    parser.add_argument("--extension", required=True)
    parser.add_argument("--ringctl", required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--lease-script", required=True)
    args = parser.parse_args()
    if shutil.which("strace") is None:
        print("strace not found (Debian: strace)", file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="php-fpm-test-")
    os.chmod(tmp, 0o755)
    test = Test(args, tmp)
    try:
        test.run()
    except BaseException:
        print(test.log(), file=sys.stderr)
        raise
    finally:
        test.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    print("php-fpm test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
