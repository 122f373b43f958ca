#!/bin/bash
# A SIGKILLed ringctl sync never leaves a torn state file: sync_state_kill.py kills a
# sync following a real etcd (Debian's etcd-server, on loopback on free ports,
# always stopped at the end) at many points while 10,000-node documents are put,
# and checks the state file after each kill.
set -u
RINGCTL=${1:?usage: sync_etcd_state_test.sh RINGCTL [KILLS]}
KILLS=${2:-30}
WORK=$(mktemp -d /tmp/shmring-sync-state.XXXXXX)
# shellcheck source=sync_test_support.sh
. "$(dirname "$0")/sync_test_support.sh"
RINGS=("sk$$")
start_etcd http
python3 "$(dirname "$0")/sync_state_kill.py" "$RINGCTL" "sk$$" "$URL" "$WORK" "$KILLS" ||
    fail "a state file was torn or missing"
echo "PASS"
