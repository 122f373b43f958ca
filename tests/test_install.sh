#!/bin/bash
# Installs the shmring_doc component (the man pages and ringctl's bash completion)
# into a fresh prefix and checks that exactly those files arrive where man(1) and
# bash-completion look, that man renders each page, and that the installed
# completion registers itself for ringctl. Then installs everything into a second
# prefix and checks that ringctl and its sync helper arrive executable, and that
# the installed ringctl, moved there from the configured prefix, runs sync through
# the installed helper. The prefixes are removed at exit.
#
# Usage: test_install.sh CMAKE BUILD_DIR MANDIR COMPLETIONS_DIR BINDIR HELPER_DIR
set -u
# HELPER_DIR is empty in a build without sync (SHMRING_SYNC=OFF).
cmake=$1 build=$2 mandir=$3 completions=$4 bindir=$5 helper_dir=${6:-}
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

prefix=$(mktemp -d /tmp/shmring-install.XXXXXX) || exit 1
full=$(mktemp -d /tmp/shmring-install.XXXXXX) || exit 1
trap 'rm -rf "$prefix" "$full"' EXIT
"$cmake" --install "$build" --prefix "$prefix" --component shmring_doc >/dev/null ||
    exit 1

expected="$completions/ringctl
$mandir/man1/ringctl.1
$mandir/man3/shmring.3
$mandir/man3/shmring_ctl.3"
got=$(cd "$prefix" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
[[ $got == "$(LC_ALL=C sort <<<"$expected")" ]] ||
    fail "installed files: got '$got', expected '$expected'"

# man renders each page, and its NAME section names it.
for page in man1/ringctl.1 man3/shmring.3 man3/shmring_ctl.3; do
    name=${page#*/}
    name=${name%.*}
    text=$(MANWIDTH=80 man -l "$prefix/$mandir/$page" 2>&1) || fail "man -l $page failed"
    grep -q "^ *$name - " <<<"$text" || fail "$page: no NAME line for $name"
done

# The installed completion defines itself for ringctl.
registered=$(bash -c 'source "$1" && complete -p ringctl' _ "$prefix/$completions/ringctl")
[[ $registered == "complete -F _ringctl ringctl" ]] ||
    fail "completion registration: '$registered'"

# ringctl and its sync helper, executable (rwxr-xr-x), each where GNUInstallDirs
# says; the helper is no command of its own in BINDIR.
"$cmake" --install "$build" --prefix "$full" >/dev/null || exit 1
for program in "$bindir/ringctl" ${helper_dir:+"$helper_dir/ringctl-sync"}; do
    mode=$(stat -c %A "$full/$program" 2>&1)
    [[ $mode == -rwxr-xr-x ]] || fail "$program: '$mode', expected -rwxr-xr-x"
done
[[ ! -e $full/$bindir/ringctl-sync ]] || fail "ringctl-sync installed in $bindir"

# The installed ringctl answers without the helper, and runs sync through it.
version=$("$full/$bindir/ringctl" --version 2>&1) || fail "ringctl --version: $version"
[[ $version == "ringctl "* ]] || fail "ringctl --version: '$version'"
if [[ -n $helper_dir ]]; then
    # The helper answers (ringctl itself writes sync's help): sync without a source.
    answer=$("$full/$bindir/ringctl" sync 2>&1) && fail "ringctl sync without a source: exit 0"
    [[ $answer == "ringctl: error: give one source: --etcd URL --key KEY, --etcd URL --prefix PREFIX, or --file PATH" ]] ||
        fail "ringctl sync without a source: '$answer'"
else
    answer=$("$full/$bindir/ringctl" sync 2>&1) && fail "ringctl sync without sync: exit 0"
    [[ $answer == "ringctl: error: this ringctl was built without sync (SHMRING_SYNC=OFF)" ]] ||
        fail "ringctl sync without sync: '$answer'"
fi

((failures == 0)) || exit 1
echo "man pages, completion, ringctl and its sync helper installed"
