#!/usr/bin/env python3
"""The node sets the etcd sync tests put, and the puts themselves.

Every document is a pure function of its number, so a test (or a check after a
SIGKILL) can say which document a ring or a state file holds. Puts go through
etcd's JSON gateway from one process: an etcdctl per put would spend the tests'
minutes starting processes on a loaded machine.

Commands:
  doc N                       the 100-node document N
  big N                       the 10,000-node document N
  put URL KEY FIRST LAST [OUT]
                              puts documents FIRST..LAST under KEY, back to back,
                              prints the last put's revision and writes its
                              document to OUT
  putraw URL KEY TEXT         puts TEXT under KEY, prints the put's revision
  writer URL KEY FIRST LOG    puts documents FIRST, FIRST+1, ... until a put fails,
                              appending each number to LOG before its put is sent
  delete URL KEY END          deletes the keys from KEY up to END (excluded), prints
                              the delete's revision
  which FILE N...             which of the 100-node documents N... FILE (a `ringctl
                              dump`) holds, or exit 1
"""
import base64
import json
import sys
import urllib.request


def doc(n):
    """A 100-node set that changes with N, every id given."""
    nodes = [{"name": "node-%d" % i, "id": i, "address": "10.0.%d.%d:11211" % (n % 7, i),
              "weight": 1 + (n + i) % 5} for i in range(n % 13, n % 13 + 100)]
    return {"algorithm": "ring", "nodes": nodes}


def big(n):
    """10,000 nodes, N in every address's port: what a state file holds says which
    document it came from. `ring` with 4 points a node keeps a publication short, so
    that the test's time goes to writes of the state file, not to building tables."""
    nodes = [{"name": "n%d" % i, "id": i + 1, "weight": 1,
              "address": "10.%d.%d.1:%d" % (i // 256, i % 256, 1000 + n)} for i in range(10000)]
    return {"algorithm": "ring", "vnodes": 4, "nodes": nodes}


def node_table(document):
    """What decides a node's answers, by name."""
    return {node["name"]: (node["id"], node["address"], node.get("weight", 1),
                           node.get("state", "up")) for node in document["nodes"]}


def b64(text):
    return base64.b64encode(text.encode()).decode()


def gateway(url, path, body, timeout=30):
    request = json.dumps(body).encode()
    with urllib.request.urlopen(url + path, request, timeout=timeout) as answer:
        return json.load(answer)


def put(url, key, text, timeout=30):
    """Puts TEXT under KEY; the revision the put made."""
    answer = gateway(url, "/v3/kv/put", {"key": b64(key), "value": b64(text)}, timeout)
    return int(answer["header"]["revision"])


def main(argv):
    command = argv[1]
    if command in ("doc", "big"):
        print(json.dumps((doc if command == "doc" else big)(int(argv[2]))))
    elif command == "put":
        url, key, first, last = argv[2], argv[3], int(argv[4]), int(argv[5])
        for n in range(first, last + 1):
            revision = put(url, key, json.dumps(doc(n)))
        print(revision)
        if len(argv) > 6:
            with open(argv[6], "w") as out:
                json.dump(doc(last), out)
    elif command == "putraw":
        print(put(argv[2], argv[3], argv[4]))
    elif command == "writer":
        url, key, n, log = argv[2], argv[3], int(argv[4]), argv[5]
        with open(log, "a") as numbers:
            while True:
                # Logged before the put: a put whose answer is lost may still be
                # committed, so its document is one sync may have seen.
                numbers.write("%d\n" % n)
                numbers.flush()
                try:
                    put(url, key, json.dumps(doc(n)), timeout=5)
                except OSError:
                    return 0
                n += 1
    elif command == "delete":
        body = {"key": b64(argv[3]), "range_end": b64(argv[4])}
        print(gateway(argv[2], "/v3/kv/deleterange", body)["header"]["revision"])
    elif command == "which":
        with open(argv[2]) as f:
            held = node_table(json.load(f))
        for n in map(int, argv[3:]):
            if node_table(doc(n)) == held:
                print(n)
                return 0
        return 1
    else:
        print("sync_docs.py: unknown command " + command, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
