#!/bin/sh
# Builds the Python package with its bundled reader the way a user gets it, offline:
# the sdist of bindings/python (`SHMRING_BUNDLED=1 python3 -m build --sdist`), then a
# wheel built from that sdist (`pip wheel`), both into OUTDIR. With VENV, installs the
# wheel into that virtual environment, made first (from PYTHON, with the system's
# site packages, which hold setuptools, wheel and pytest) when it does not exist.
# Builds from a copy of the tree that holds this script, changes not yet committed
# included, so the tree itself gets no build files. Prints the paths it made.
#
# PYTHON (default /usr/bin/python3: Debian's, whose python3-build, setuptools and
# wheel do the work) may name another Python 3.10+ that has build, setuptools and
# wheel.
#
# Usage: tools/python_wheel.sh OUTDIR [VENV]
set -eu
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 OUTDIR [VENV]" >&2; exit 2; }
outdir=$1 venv=${2:-}
python=${PYTHON:-/usr/bin/python3}
tree=$(cd "$(dirname "$0")/.." && pwd)
. "$tree/tests/packages/copy_tree.sh"

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/shmring-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
copy_tree "$tree" "$work/src"

(cd "$work/src/bindings/python" &&
    SHMRING_BUNDLED=1 "$python" -m build --sdist --no-isolation --outdir "$work/sdist") \
    >"$work/sdist.log" 2>&1 || { cat "$work/sdist.log" >&2; exit 1; }
sdist=$(ls "$work"/sdist/shmring-*.tar.gz)
cp "$sdist" "$outdir/"
sdist=$outdir/$(basename "$sdist")
echo "sdist: $sdist"

# The sdist builds bundled by itself (it carries the reader's sources).
env -u SHMRING_BUNDLED "$python" -m pip wheel --quiet --no-deps --no-build-isolation \
    --no-index --no-cache-dir --wheel-dir "$work/wheel" "$sdist" \
    >"$work/wheel.log" 2>&1 || { cat "$work/wheel.log" >&2; exit 1; }
wheel=$(ls "$work"/wheel/shmring-*.whl)
cp "$wheel" "$outdir/"
wheel=$outdir/$(basename "$wheel")
echo "wheel: $wheel"

if [ -n "$venv" ]; then
    [ -x "$venv/bin/python" ] || "$python" -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install --quiet --no-index --no-deps --force-reinstall "$wheel"
    echo "installed into: $venv"
fi
