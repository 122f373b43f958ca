#!/bin/bash
# The Python package as a user without libshmring gets it, offline: the sdist and a
# wheel built from it (tools/python_wheel.sh: both compile the reader's sources in),
# the sdist installed with `pip install --no-build-isolation` into one fresh venv of
# Debian's python3 and the wheel into another, with no libshmring on any path. Each
# installed module must be the venv's, carry CMake's version, link no libshmring or
# liburcu and export only its init function; the binding's pytest suite then runs
# against it from outside the source tree (the wheel's with the gunicorn test, whose
# workers run as `venv/bin/python -m gunicorn`, the README's recipe). Last, the
# wheel's module and the build's libshmring in one process (python_two_readers.py),
# and the wheel's reader against the previous release's writer and rings published
# for newer readers (tests/compat/test_previous_release.py, with the previous
# release's build kept in COMPAT_WORK).
# Usage: python_sdist.sh SRC LIBSHMRING RINGCTL VERSION COMPAT_WORK
set -u
src=$1 libshmring=$2 ringctl=$3 version=$4 compat_work=$5
python=/usr/bin/python3
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
work=$(mktemp -d /tmp/shmring-sdist.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
# Nothing from the caller's environment: no LD_LIBRARY_PATH, PKG_CONFIG_PATH,
# PYTHONPATH or SHMRING_BUNDLED.
clean=(env -i PATH=/usr/bin:/bin HOME="$work" TMPDIR=/tmp PYTHONDONTWRITEBYTECODE=1)

"${clean[@]}" sh "$src/tools/python_wheel.sh" "$work/dist" >"$work/wheel.log" 2>&1 ||
    { cat "$work/wheel.log" >&2; echo "FAIL: tools/python_wheel.sh" >&2; exit 1; }
echo "sdist and wheel built in $SECONDS s"
sdist=$work/dist/shmring-$version.tar.gz
wheel=$(ls "$work"/dist/shmring-"$version"-*.whl 2>/dev/null)
[[ -f $sdist && -f $wheel ]] || { ls -l "$work/dist" >&2; echo "FAIL: no sdist or wheel of $version" >&2; exit 1; }

# The reader's modules are in the sdist, the builder's are not.
contents=$(tar -tzf "$sdist")
for file in bundled/lib/reader.c bundled/lib/snapshot_lookup.c bundled/include/shmring.h \
            bundled/include/shmring_version.h; do
    grep -qx "shmring-$version/$file" <<<"$contents" || fail "the sdist has no $file"
done
for file in bundled/lib/publish.c bundled/lib/snapshot_build.c bundled/lib/json.c; do
    ! grep -qx "shmring-$version/$file" <<<"$contents" || fail "the sdist carries $file"
done

start=$SECONDS
"$python" -m venv --system-site-packages "$work/venv-sdist"
"${clean[@]}" "$work/venv-sdist/bin/pip" install --quiet --no-build-isolation --no-index \
    --no-deps --no-cache-dir "$sdist" >"$work/pip.log" 2>&1 ||
    { cat "$work/pip.log" >&2; fail "pip install of the sdist"; }
echo "venv made and the sdist installed in $((SECONDS - start)) s"
start=$SECONDS
"$python" -m venv --system-site-packages "$work/venv-wheel"
"${clean[@]}" "$work/venv-wheel/bin/pip" install --quiet --no-index --no-deps "$wheel" ||
    fail "pip install of the wheel"
echo "venv made and the wheel installed in $((SECONDS - start)) s"

cd "$work" || exit 1
for venv in "$work/venv-sdist" "$work/venv-wheel"; do
    module=$("${clean[@]}" "$venv/bin/python" -c '
import importlib.metadata, shmring, shmring._shmring as ext
print(ext.__file__, importlib.metadata.version("shmring"), shmring.__version__,
      shmring.library_version)') || { fail "$venv: import shmring"; continue; }
    read -r extension versions <<<"$module"
    [[ $extension == "$venv"/lib/python3*/site-packages/shmring/_shmring*.so ]] ||
        fail "$venv: shmring imported from $extension"
    [[ $versions == "$version $version $version" ]] ||
        fail "$venv: distribution, module and reader versions '$versions', CMake: $version"
    linked=$(ldd "$extension")
    ! grep -q -e libshmring -e liburcu <<<"$linked" ||
        fail "$venv: the module links $(grep -e libshmring -e liburcu <<<"$linked")"
    exported=$(nm -D --defined-only "$extension" | awk '{print $NF}')
    [[ $exported == PyInit__shmring ]] || fail "$venv: the module exports $exported"
done

# The suite against each installed package, from outside the source tree (its
# conftest and tests only; `import shmring` finds the venv's).
start=$SECONDS
"${clean[@]}" SHMRING_RINGCTL="$ringctl" SHMRING_VERSION="$version" \
    "$work/venv-sdist/bin/python" -m pytest -q -p no:cacheprovider \
    --ignore="$src/bindings/python/tests/test_gunicorn.py" "$src/bindings/python/tests" ||
    fail "the binding's tests against the sdist's install"
"${clean[@]}" SHMRING_RINGCTL="$ringctl" SHMRING_VERSION="$version" \
    "$work/venv-wheel/bin/python" -m pytest -q -p no:cacheprovider \
    "$src/bindings/python/tests" || fail "the binding's tests against the wheel's install"
echo "the binding's tests ran against both installs in $((SECONDS - start)) s"

"${clean[@]}" "$work/venv-wheel/bin/python" "$src/tests/packages/python_two_readers.py" \
    "$libshmring" "$ringctl" || fail "the wheel's reader beside libshmring"

start=$SECONDS
python3 "$src/tests/compat/test_previous_release.py" --source "$src" --work "$compat_work" \
    --ringctl "$ringctl" \
    --reader "wheel=${clean[*]} $work/venv-wheel/bin/python $src/tests/compat/python_reader.py" ||
    fail "the wheel's reader against the previous release"
echo "the wheel's reader against the previous release in $((SECONDS - start)) s"

((failures == 0)) || exit 1
echo "sdist and wheel of shmring $version: installed offline without libshmring, tests pass"
