#!/bin/bash
# Benchmark of ringctl sync against a real etcd (not a test: figures only).
#   put-to-publish: one etcd put of a 100-node set, then the time until all three
#     synced rings show the new generation (polled with `ringctl show --json`, which
#     adds a few ms of its own), over 100 puts: p50 and p99;
#   full re-read: `ringctl sync --once` of a 10,000-key prefix (range, node set,
#     publish).
# Usage: tools/bench-sync.sh BUILD_DIR
set -u
RINGCTL=${1:?usage: bench-sync.sh BUILD_DIR}/tools/ringctl
WORK=$(mktemp -d /tmp/shmring-bench-sync.XXXXXX)
# shellcheck source=tools/etcd-loopback.sh
. "$(dirname "$0")/etcd-loopback.sh"
etcd_loopback_ports
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    for r in 1 2 3 big; do "$RINGCTL" -r bench$$-$r destroy >/dev/null 2>&1; done
    rm -rf "$WORK"
}
trap cleanup EXIT
etcd --name b --data-dir "$WORK/etcd" --listen-client-urls "$URL" --advertise-client-urls "$URL" \
    --listen-peer-urls "http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
    --initial-cluster "b=http://127.0.0.1:$PEER_PORT" >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
until ETCDCTL_API=3 etcdctl --endpoints="$URL" endpoint health >/dev/null 2>&1; do sleep 0.1; done
python3 - "$URL" "$RINGCTL" "bench$$" <<'PY'
import base64, json, subprocess, sys, time, urllib.request
url, ringctl, tag = sys.argv[1:4]
def put(key, value):
    body = json.dumps({"key": base64.b64encode(key.encode()).decode(),
                       "value": base64.b64encode(value.encode()).decode()}).encode()
    urllib.request.urlopen(url + "/v3/kv/put", body).read()
def doc(n):
    return json.dumps({"nodes": [{"name": "node-%d" % i, "id": i, "address": "10.0.0.%d:%d" % (i, n),
                                  "weight": 1 + (i + n) % 3} for i in range(100)]})
def generation(ring):
    out = subprocess.run([ringctl, "-r", ring, "show", "--json"], capture_output=True, text=True).stdout
    return json.loads(out)["generation"] if out else 0
rings = ["%s-%d" % (tag, i) for i in (1, 2, 3)]
put("/bench/doc", doc(0))
syncs = [subprocess.Popen([ringctl, "-r", r, "sync", "--etcd", url, "--key", "/bench/doc"],
                          stderr=subprocess.DEVNULL) for r in rings]
while any(generation(r) < 1 for r in rings):
    time.sleep(0.05)
latencies = []
for n in range(1, 101):
    before = [generation(r) for r in rings]
    start = time.perf_counter()
    put("/bench/doc", doc(n))
    pending = set(range(3))
    while pending:
        pending = {i for i in pending if generation(rings[i]) == before[i]}
    latencies.append((time.perf_counter() - start) * 1000)
for s in syncs:
    s.terminate(); s.wait()
latencies.sort()
print("put-to-publish on 3 rings, 100-node set, 100 puts: p50 %.1f ms, p99 %.1f ms"
      % (latencies[49], latencies[98]))
for i in range(10000):
    put("/big/node-%05d" % i, json.dumps({"address": "10.%d.%d.%d:11211" % (i >> 16, (i >> 8) & 255, i & 255), "id": i}))
times = []
for _ in range(3):
    subprocess.run([ringctl, "-r", tag + "-big", "destroy"], capture_output=True)
    start = time.perf_counter()
    subprocess.run([ringctl, "-r", tag + "-big", "sync", "--once", "--etcd", url, "--prefix", "/big/"],
                   stderr=subprocess.DEVNULL, check=True)
    times.append((time.perf_counter() - start) * 1000)
print("full re-read of a 10,000-key prefix (sync --once, range to publish): best %.0f ms, median %.0f ms"
      % (min(times), sorted(times)[1]))
PY
