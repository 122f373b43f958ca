#!/bin/bash
# The installed unit template's sandbox, as `systemd-analyze security --offline=true`
# rates it: an instance of the unit installed by `cmake --install` into a DESTDIR
# must be rated at most 1.5 (systemd's "OK"), and the unit must say RemoveIPC=no
# (RemoveIPC=yes and DynamicUser=yes delete the ring when the service stops).
# The rating is parsed from the "Overall exposure level" line; the same parse of the
# unit stripped of its hardening must find it above the threshold, so the check can
# fail.
# Usage: sync_systemd_security_test.sh CMAKE BUILD_DIR SYSTEMD_ANALYZE
set -u
CMAKE=$1 BUILD=$2 ANALYZE=$3
THRESHOLD=1.5
WORK=$(mktemp -d /tmp/shmring-sync-security.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

ROOT=$WORK/root
DESTDIR=$ROOT "$CMAKE" --install "$BUILD" >/dev/null || fail "cmake --install"
unit=$(cd "$ROOT" && find . -name 'ringctl-sync@.service' | sed 's|^\.||')
[ -n "$unit" ] || fail "the unit template was not installed"

# exposure UNIT_NAME: the overall exposure level of UNIT_NAME under $ROOT ("8.9").
exposure() {
    local out
    out=$("$ANALYZE" security --offline=true --root="$ROOT" "$1" 2>&1) ||
        fail "systemd-analyze security $1 exited $?: $out"
    sed -n "s/^→ Overall exposure level for $1: \([0-9]*\.[0-9]\) .*/\1/p" <<<"$out" |
        grep . || fail "no exposure level in: $out"
}
# at_most A B: whether the decimal A is at most B.
at_most() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

echo "== RemoveIPC=no, and neither RemoveIPC=yes nor DynamicUser=yes"
grep -qx 'RemoveIPC=no' "$ROOT$unit" || fail "$unit does not say RemoveIPC=no"
if grep -Eq '^(RemoveIPC|DynamicUser)=(yes|true|on|1)$' "$ROOT$unit"; then
    fail "$unit deletes the service user's shared memory: $(grep -E '^(RemoveIPC|DynamicUser)=' "$ROOT$unit")"
fi
echo "ok: $unit says RemoveIPC=no"

echo "== exposure of ringctl-sync@cache.service at most $THRESHOLD"
cp "$ROOT$unit" "$ROOT${unit%@.service}@cache.service"
level=$(exposure ringctl-sync@cache.service) || exit 1
at_most "$level" "$THRESHOLD" ||
    fail "exposure $level, above $THRESHOLD: $("$ANALYZE" security --offline=true --root="$ROOT" ringctl-sync@cache.service 2>&1 | grep '^✗')"
echo "ok: exposure $level"

# The check can fail: the unit without its sandbox (every line from User= to the
# [Install] section gone, as the unit was before it had one) is rated above it.
sed '/^User=/,/^\[Install\]/{/^\[Install\]/!d}' "$ROOT$unit" >"$ROOT${unit%@.service}-bare@cache.service"
grep -q '^ExecStart=' "$ROOT${unit%@.service}-bare@cache.service" || fail "stripped too much"
bare=$(exposure ringctl-sync-bare@cache.service) || exit 1
at_most "$bare" "$THRESHOLD" && fail "the unit without its sandbox passes: exposure $bare"
echo "ok: without its sandbox, exposure $bare (above $THRESHOLD)"
echo "PASS"
