#!/bin/sh
# The Python package the way users install it, offline: libshmring installed under a
# temporary prefix, then `pip install --no-build-isolation --no-index` of a copy of
# bindings/python into a venv that sees Debian's setuptools and wheel, then the
# pytest suite (without the gunicorn test) against that installed package. The
# installed distribution's version must be CMake's project version, which ctest passes
# as SHMRING_VERSION.
#
# Usage: SHMRING_VERSION=X.Y.Z pip_install.sh PYTHON BUILD_DIR SOURCE_DIR RINGCTL
set -eu
python=$1 build_dir=$2 source_dir=$3 ringctl=$4

work=$(mktemp -d "${TMPDIR:-/tmp}/shmring-pip.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
pc=$(find "$work/prefix" -name shmring.pc -print -quit)
test -n "$pc" || { echo "no shmring.pc installed" >&2; exit 1; }

# pip builds in the source tree: build a copy, never the checkout.
mkdir "$work/src"
cp -R "$source_dir/pyproject.toml" "$source_dir/setup.py" "$source_dir/README.md" \
      "$source_dir/src" "$work/src/"
"$python" -m venv --system-site-packages "$work/venv"
PKG_CONFIG_PATH=$(dirname "$pc") "$work/venv/bin/pip" install --quiet \
    --no-build-isolation --no-index --no-deps "$work/src"

cd "$work"
env -u PYTHONPATH "$work/venv/bin/python" - "$work/venv" <<'PY'
import importlib.metadata, os, sys, shmring
assert shmring.__file__.startswith(sys.argv[1]), shmring.__file__
# The distribution's version (setup.py's, from pkg-config), the module's and the
# library's are all CMake's project(VERSION).
versions = (importlib.metadata.version("shmring"), shmring.__version__,
            shmring.library_version)
assert versions == (os.environ["SHMRING_VERSION"],) * 3, versions
print("installed", shmring.__file__, "version", shmring.__version__)
PY
# The README runs gunicorn as `venv/bin/python -m gunicorn`: Debian's gunicorn, seen
# through --system-site-packages, and the venv's shmring, from one interpreter.
env -u PYTHONPATH "$work/venv/bin/python" -c '
import gunicorn, shmring, sys
assert gunicorn.__file__.startswith("/usr/lib/python3/dist-packages/"), gunicorn.__file__
assert shmring.__file__.startswith(sys.prefix), shmring.__file__
print("gunicorn", gunicorn.__version__, "and shmring", shmring.__version__, "from", sys.executable)'
env -u PYTHONPATH "$work/venv/bin/python" -m gunicorn --version
env -u PYTHONPATH SHMRING_RINGCTL="$ringctl" "$work/venv/bin/python" -m pytest -q \
    -p no:cacheprovider --ignore="$source_dir/tests/test_gunicorn.py" "$source_dir/tests"
