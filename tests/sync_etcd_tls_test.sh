#!/bin/bash
# ringctl sync against a real etcd that demands what production ones do: TLS with a
# client certificate (a CA, server and client certificates made here with openssl),
# then etcd's user/password authentication (root, and a user whose role may only
# read the ring's key). The right credentials converge; a wrong CA, a missing client
# certificate and a wrong password each give one clear line per attempt, leave the
# ring as it was, and sync keeps retrying. etcd runs on loopback on free ports with a
# temporary data directory and is always stopped at the end. Every wait is for a
# condition (a log line, ringctl check passing) with a deadline.
set -u
RINGCTL=${1:?usage: sync_etcd_tls_test.sh RINGCTL}
WORK=$(mktemp -d /tmp/shmring-sync-tls.XXXXXX)
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
RING=tls$$
RINGS=("$RING")
# count_at_least N PATTERN FILE: FILE has at least N lines holding PATTERN.
count_at_least() { [ "$(grep -cF -- "$2" "$3")" -ge "$1" ]; }
generation() { "$RINGCTL" -r "$RING" show --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])'; }

start_sync() { # LOG ARGS...
    local log=$1; shift
    "$RINGCTL" -r "$RING" sync --backoff-max 400 "$@" 2>>"$log" &
    SYNC_PID=$!
    PIDS+=("$SYNC_PID")
}
stop_sync() {
    kill -TERM "$SYNC_PID"
    wait "$SYNC_PID"; local rc=$?
    [ $rc -eq 0 ] || fail "sync exited $rc after SIGTERM"
}
# refused_twice LOG LINE: LINE appears twice (sync retries), the ring unchanged.
refused_twice() {
    until_true 60 count_at_least 2 "$2" "$1" || { cat "$1" >&2; fail "no repeated line: $2"; }
    "$RINGCTL" -r "$RING" check "$WORK/before.json" >/dev/null || fail "ring changed"
    [ "$(generation)" = "$G" ] || fail "ring republished"
    kill -0 "$SYNC_PID" 2>/dev/null || fail "sync gave up"
    grep -F -- "$2" "$1" | head -1
}

echo "== certificates"
cd "$WORK" || exit 1
ssl() { openssl "$@" 2>>"$WORK/openssl.log" || fail "openssl $1"; }
for ca in ca other-ca; do
    ssl req -x509 -newkey rsa:2048 -nodes -keyout $ca.key -out $ca.pem -days 2 -subj "/CN=shmring test $ca"
done
ssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1"
# etcd's JSON gateway reaches etcd's gRPC with the server's own certificate as its
# client certificate, so that one must be good for both.
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >server.ext
ssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext
ssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=shmring-client"
printf 'extendedKeyUsage=clientAuth\n' >client.ext
ssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2 -extfile client.ext
cd - >/dev/null || exit 1
echo "ok"

echo "== TLS with a client certificate"
E() { etcdctl --endpoints="$URL" --cacert "$WORK/ca.pem" --cert "$WORK/client.pem" --key "$WORK/client.key" "$@"; }
start_etcd https --cert-file "$WORK/server.pem" --key-file "$WORK/server.key" \
    --client-cert-auth --trusted-ca-file "$WORK/ca.pem"
echo '{"nodes": [{"name": "before", "id": 1}]}' >"$WORK/before.json"
echo '{"nodes": [{"name": "a", "id": 1}, {"name": "b", "id": 2}]}' >"$WORK/tls.json"
"$RINGCTL" -r "$RING" load "$WORK/before.json" >/dev/null || fail "load"
G=$(generation)
E put /t/doc "$(cat "$WORK/tls.json")" >/dev/null || fail "put over TLS"

start_sync "$WORK/wrong-ca.log" --etcd "$URL" --key /t/doc --cacert "$WORK/other-ca.pem" \
    --cert "$WORK/client.pem" --cert-key "$WORK/client.key"
refused_twice "$WORK/wrong-ca.log" "cannot read /t/doc from $URL: SSL certificate problem: unable to get local issuer certificate"
stop_sync

start_sync "$WORK/no-cert.log" --etcd "$URL" --key /t/doc --cacert "$WORK/ca.pem"
refused_twice "$WORK/no-cert.log" "cannot read /t/doc from $URL: etcd wants a client certificate and none was given (--cert, --cert-key)"
stop_sync

start_sync "$WORK/tls.log" --etcd "$URL" --key /t/doc --cacert "$WORK/ca.pem" \
    --cert "$WORK/client.pem" --cert-key "$WORK/client.key"
until_true 60 "$RINGCTL" -r "$RING" check "$WORK/tls.json" || fail "no sync over TLS"
echo '{"nodes": [{"name": "a", "id": 1}, {"name": "c", "id": 3}]}' >"$WORK/tls2.json"
E put /t/doc "$(cat "$WORK/tls2.json")" >/dev/null || fail "put over TLS"
until_true 60 "$RINGCTL" -r "$RING" check "$WORK/tls2.json" || fail "watch over TLS did not follow"
stop_sync
grep -F "published" "$WORK/tls.log" | tail -1
stop_etcd
echo "ok"

echo "== user/password authentication"
E() { etcdctl --endpoints="$URL" "$@"; }
start_etcd http
E user add root:rootpw >/dev/null || fail "user add root"
E user grant-role root root >/dev/null || fail "grant-role root"
E role add ring-reader >/dev/null || fail "role add"
E role grant-permission ring-reader read /t/doc >/dev/null || fail "grant"
E user add shmring:s3cret-pw >/dev/null || fail "user add shmring"
E user grant-role shmring ring-reader >/dev/null || fail "grant-role"
E auth enable >/dev/null || fail "auth enable"
E() { etcdctl --endpoints="$URL" --user root:rootpw "$@"; }
echo '{"nodes": [{"name": "x", "id": 7}]}' >"$WORK/auth.json"
E put /t/doc "$(cat "$WORK/auth.json")" >/dev/null || fail "put as root"
"$RINGCTL" -r "$RING" load "$WORK/before.json" >/dev/null || fail "load"
G=$(generation)

printf 'wrong-pw\n' >"$WORK/wrong.password"
start_sync "$WORK/wrong-pw.log" --etcd "$URL" --key /t/doc --user shmring --password-file "$WORK/wrong.password"
refused_twice "$WORK/wrong-pw.log" "cannot read /t/doc from $URL: authentication as 'shmring' failed: HTTP 400: etcdserver: authentication failed, invalid user ID or password"
stop_sync

# No credentials at all: etcd's own refusal, named.
start_sync "$WORK/anonymous.log" --etcd "$URL" --key /t/doc
refused_twice "$WORK/anonymous.log" "cannot read /t/doc from $URL: HTTP 400: etcdserver: user name is empty"
stop_sync

# --user without a password source is a usage error, before anything starts.
(unset SHMRING_ETCD_PASSWORD; "$RINGCTL" -r "$RING" sync --etcd "$URL" --key /t/doc --user shmring 2>"$WORK/usage.log"); rc=$?
[ $rc -eq 2 ] || fail "--user without a password exited $rc"
grep -qxF "ringctl: error: --user needs --password-file or \$SHMRING_ETCD_PASSWORD" "$WORK/usage.log" || fail "usage line: $(cat "$WORK/usage.log")"

# An empty or overlong password is refused before anything starts, never sent cut.
: >"$WORK/empty.password"
head -c 1100 /dev/zero | tr '\0' x >"$WORK/long.password"
for case in "empty:ringctl: error: the password in '$WORK/empty.password' is empty" \
    "long:ringctl: error: the password in '$WORK/long.password' is longer than 1022 bytes"; do
    file="$WORK/${case%%:*}.password"
    "$RINGCTL" -r "$RING" sync --etcd "$URL" --key /t/doc --user shmring --password-file "$file" 2>"$WORK/usage.log"; rc=$?
    [ $rc -eq 2 ] || fail "${case%%:*} password exited $rc"
    grep -qxF "${case#*:}" "$WORK/usage.log" || fail "${case%%:*} password line: $(cat "$WORK/usage.log")"
done

# The password from the environment: never on the command line, where ps shows it.
SHMRING_ETCD_PASSWORD=s3cret-pw start_sync "$WORK/auth.log" --etcd "$URL" --key /t/doc --user shmring
until_true 60 "$RINGCTL" -r "$RING" check "$WORK/auth.json" || fail "no sync as shmring"
tr '\0' ' ' <"/proc/$SYNC_PID/cmdline" | grep -q s3cret && fail "password on the command line"
echo '{"nodes": [{"name": "x", "id": 7}, {"name": "y", "id": 8}]}' >"$WORK/auth2.json"
E put /t/doc "$(cat "$WORK/auth2.json")" >/dev/null || fail "put as root"
until_true 60 "$RINGCTL" -r "$RING" check "$WORK/auth2.json" || fail "authenticated watch did not follow"
stop_sync

# The password from a file.
printf 's3cret-pw\n' >"$WORK/right.password"
echo '{"nodes": [{"name": "z", "id": 9}]}' >"$WORK/auth3.json"
E put /t/doc "$(cat "$WORK/auth3.json")" >/dev/null || fail "put as root"
"$RINGCTL" -r "$RING" sync --once --etcd "$URL" --key /t/doc --user shmring \
    --password-file "$WORK/right.password" 2>>"$WORK/auth.log" || fail "--once with --password-file"
"$RINGCTL" -r "$RING" check "$WORK/auth3.json" >/dev/null || fail "--password-file did not sync"
grep -F "published" "$WORK/auth.log" | tail -1
stop_etcd
echo "ok"
echo "PASS"
