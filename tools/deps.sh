# Sourced by tools/test.sh and tools/demo.sh: installs the Debian 12 packages that
# building and testing shmring needs. As root it runs apt-get itself; otherwise it
# prints the apt-get line to run and stops.

SHMRING_PACKAGES="build-essential cmake pkg-config liburcu-dev libjansson-dev check \
libsubunit-dev libxxhash-dev nettle-dev zlib1g-dev libmemcached-dev clang \
libclang-rt-14-dev llvm-14 valgrind strace python3 abigail-tools"
# ringctl sync: libcurl and libsystemd to build it, a real etcd for its tests, and
# systemd for systemd-analyze, which verifies the installed unit (a slim Debian 12
# image has libsystemd without it).
SHMRING_PACKAGES="$SHMRING_PACKAGES libcurl4-openssl-dev libsystemd-dev etcd-server \
etcd-client systemd"
# sync names a missing client certificate through OpenSSL's own callback (libssl-dev);
# its TLS test makes a CA and certificates with the openssl tool.
SHMRING_PACKAGES="$SHMRING_PACKAGES libssl-dev openssl"
# sync as the unit's user: runuser (util-linux) runs it and its readers, and the user
# made from the installed sysusers.d file by systemd-sysusers is removed with userdel
# and groupdel (passwd).
SHMRING_PACKAGES="$SHMRING_PACKAGES util-linux passwd"
# The man pages' source format (scdoc), and promtool (in prometheus), the real
# parser that the metrics test checks `ringctl metrics` with.
SHMRING_PACKAGES="$SHMRING_PACKAGES scdoc prometheus"
# The manual in docs/: Sphinx with MyST for its Markdown pages; curl, with which the
# README's quick starts ask their workers (ctest docs_examples runs them).
SHMRING_PACKAGES="$SHMRING_PACKAGES python3-sphinx python3-myst-parser curl"
# The performance page's pictures, drawn from ringbench's JSON by
# tools/bench/perf_plots.py with matplotlib.
SHMRING_PACKAGES="$SHMRING_PACKAGES python3-matplotlib"
# The bindings and the real servers their tests start: Python's headers, setuptools,
# pytest and gunicorn; OpenResty's LuaJIT (luajit2, which lua-resty-core needs;
# Debian's luajit conflicts with it) and nginx's Lua module; PHP's headers, CLI and
# FPM, and cgi-fcgi to speak FastCGI to it.
SHMRING_PACKAGES="$SHMRING_PACKAGES python3-dev python3-setuptools python3-wheel \
python3-pip python3-venv python3-pytest \
gunicorn luajit2 nginx libnginx-mod-http-lua php8.2-dev php8.2-cli php8.2-fpm \
libfcgi-bin"
# The peers the peer-algorithm tests run: nutcracker (twemproxy) fronting memcached;
# nginx, installed above, runs the `hash consistent` upstreams of
# tests/peers/test_nginx.py, the stream one through its stream module.
SHMRING_PACKAGES="$SHMRING_PACKAGES nutcracker memcached libnginx-mod-stream"
# wrk loads nginx with a skewed key stream in the bounded-loads proof
# (tools/bench/nginx_bounded.py, ctest lua_nginx_bounded).
SHMRING_PACKAGES="$SHMRING_PACKAGES wrk"
# What the bindings' benchmarks compare with: uhashring, Python's usual ring library
# (bench.py), and php-memcached, whose getServerByKey() is PHP's usual way to pick a
# server by key (bench.php); the PHP binding's tests/011_memcached_ketama.phpt also
# checks its README's php-memcached node set against php-memcached, key for key.
# tests/peers/test_uhashring.py checks the `uhashring` algorithm against uhashring.
# (The `hashring` peer test runs npm's memcached client on Node.js 20, which comes
# from nodesource rather than Debian, with npm installing the client at test time.)
SHMRING_PACKAGES="$SHMRING_PACKAGES python3-uhashring php8.2-memcached"
# The node algorithms' peers: pymemcache's HashClient (rendezvous) for Debian's
# python3, and Guava's Hashing.consistentHash (jump), compiled against at test time
# with the default JDK.
SHMRING_PACKAGES="$SHMRING_PACKAGES python3-pymemcache default-jdk-headless libguava-java"
# spymemcached (2.12.3): tests/peers/test_spymemcached.py compiles a client of its
# KetamaNodeLocator against the jar with the default JDK.
SHMRING_PACKAGES="$SHMRING_PACKAGES libspymemcached-java"
# haproxy (2.6) runs the `hash-type consistent` backends of tests/peers/test_haproxy.py.
SHMRING_PACKAGES="$SHMRING_PACKAGES haproxy"
# The Node.js binding needs node, npm (with the node-gyp it bundles) and Node's headers
# in /usr/include/node: nodesource's `nodejs` package has all three, and CI machines
# have it. It is not listed here, because on a machine without nodesource's apt
# source that name would install Debian's nodejs, which ships no npm, and Debian's
# npm and node-gyp packages conflict with nodesource's nodejs. CMake's
# SHMRING_REQUIRE_BINDINGS fails configuration when any of them is missing.
# The Ruby binding: Ruby's headers to build the extension (ruby-dev, with gem), its
# minitest suite (ruby-minitest), and the Rack servers its tests start: Puma in cluster
# mode and Unicorn, on Rack (ruby-rack); and Dalli's ring, which bindings/ruby/bench.rb
# compares with, each of its servers a connection to memcached (installed above).
SHMRING_PACKAGES="$SHMRING_PACKAGES ruby-dev ruby-minitest ruby-rack puma unicorn ruby-dalli"
# The client libraries' rings: Ruby's Dalli (tests/peers/test_dalli.py asks its
# client's ring, on Debian's ruby), and Go's groupcache consistenthash, which
# tests/peers/test_groupcache.py builds offline with golang-go in GOPATH mode.
SHMRING_PACKAGES="$SHMRING_PACKAGES ruby-dalli golang-go golang-github-golang-groupcache-dev"

# The packages' tests (tests/packages/) build shmring's Debian packages with
# debhelper, dh-python and dh-php (php-dev is their PHP build dependency) and check
# them with lintian.
SHMRING_PACKAGES="$SHMRING_PACKAGES debhelper dh-python dh-php php-dev lintian"
# ... the Lua module's rock with luarocks, and the PHP extension's PECL archive with
# pecl (php-pear).
SHMRING_PACKAGES="$SHMRING_PACKAGES luarocks php-pear"
# ... and the Python sdist with python3-build (tools/python_wheel.sh; setuptools,
# wheel, venv and pytest are installed above).
SHMRING_PACKAGES="$SHMRING_PACKAGES python3-build"

shmring_install_deps() {
    local missing=""
    for pkg in $SHMRING_PACKAGES; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing="$missing $pkg"
        fi
    done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "shmring: missing Debian packages; install them with:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
        return 1
    fi
    echo "shmring: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q && apt-get install -y -q --no-install-recommends $missing
}
