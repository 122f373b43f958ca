#!/bin/bash
# `luarocks make` of bindings/lua's rockspec into a fresh tree, as a LuaJIT or
# OpenResty user builds the module, against a libshmring installed with cmake
# --install into a fresh prefix (the rock finds it through SHMRING_INCDIR and
# SHMRING_LIBDIR, as it would find a system one by itself). The installed module,
# with no SHMRING_LIBRARY, loads the library where the rock was built against it and
# answers 200 keys as ringctl lookup does; `luarocks remove` takes both files away.
# Usage: luarocks_make.sh SRC BUILD CMAKE LIBDIR RINGCTL VERSION
set -u
src=$1 build=$2 cmake=$3 libdir=$4 ringctl=$5 version=$6
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
work=$(mktemp -d /tmp/shmring-rock.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/copy_tree.sh"

"$cmake" --install "$build" --prefix "$work/prefix" >/dev/null || exit 1
copy_tree "$src" "$work/src" || exit 1
rockspec=bindings/lua/shmring-$version-1.rockspec
[[ -f $work/src/$rockspec ]] || { echo "FAIL: no $rockspec" >&2; exit 1; }
tree=$work/tree
if ! (cd "$work/src" && luarocks --lua-version=5.1 --tree "$tree" make "$rockspec" \
    SHMRING_INCDIR="$work/prefix/include" SHMRING_LIBDIR="$work/prefix/$libdir") \
    >"$work/make.log" 2>&1; then
    cat "$work/make.log" >&2
    echo "FAIL: luarocks make $rockspec" >&2
    exit 1
fi
for module in shmring.lua shmring/cdef.lua; do
    [[ -f $tree/share/lua/5.1/$module ]] || fail "luarocks make installed no $module"
done

export SHMRING_DIR=$work/rings
mkdir "$SHMRING_DIR"
cat >"$work/nodes.json" <<'JSON'
{"nodes": [{"name": "cache-a", "address": "10.0.1.1:11211", "weight": 2},
           {"name": "cache-b", "address": "10.0.1.2:11211"},
           {"name": "cache-c", "address": "10.0.1.3:11211"}]}
JSON
"$ringctl" -r cache load "$work/nodes.json" >/dev/null || fail "ringctl load"
seq -f 'user:%g' 1 200 >"$work/keys"
expected=$(xargs "$ringctl" -r cache lookup <"$work/keys")
cat >"$work/lookup.lua" <<'LUA'
local ring = assert(require("shmring").open("cache", {directory = arg[1]}))
for key in io.lines(arg[2]) do
    local node = assert(ring:lookup(key))
    print(key .. "\t" .. node.name .. "\t" .. node.address)
end
LUA
got=$(env -i PATH=/usr/bin:/bin "LUA_PATH=$tree/share/lua/5.1/?.lua;;" \
      luajit "$work/lookup.lua" "$SHMRING_DIR" "$work/keys")
[[ -n $expected && $got == "$expected" ]] ||
    fail "the rock's module answers differently from ringctl lookup: $(diff <(echo "$expected") <(echo "$got") | head -3)"

luarocks --lua-version=5.1 --tree "$tree" remove shmring >/dev/null || fail "luarocks remove"
for module in shmring.lua shmring/cdef.lua; do
    [[ ! -e $tree/share/lua/5.1/$module ]] || fail "luarocks remove left $module"
done
((failures == 0)) || exit 1
echo "luarocks make: $rockspec installed, 200 keys as ringctl lookup, removed"
