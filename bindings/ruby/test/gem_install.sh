#!/bin/sh
# The gem the way users install it, offline: libshmring installed under a temporary
# prefix, `gem build` of a copy of bindings/ruby, `gem install --local` of the .gem
# into a temporary GEM_HOME (extconf.rb finds the library with pkg-config and records
# its run path), then the minitest files TEST... (paths under SOURCE_DIR) in one run
# against that installed gem, with nothing of the build tree on the load path or the
# library path. The gem's version must be CMake's project version, which ctest passes
# as SHMRING_VERSION.
#
# Usage: SHMRING_VERSION=X.Y.Z gem_install.sh RUBY GEM BUILD_DIR SOURCE_DIR TEST...
set -eu
ruby=$1 gem=$2 build_dir=$3 source_dir=$4
shift 4
test $# -gt 0 || { echo "no test files given" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/shmring-gem.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
pc=$(find "$work/prefix" -name shmring.pc -print -quit)
test -n "$pc" || { echo "no shmring.pc installed" >&2; exit 1; }

# gem build packs the files the gemspec names; build a copy, never the checkout.
mkdir "$work/src"
cp -R "$source_dir/shmring.gemspec" "$source_dir/README.md" "$source_dir/lib" \
      "$source_dir/ext" "$work/src/"
(cd "$work/src" && "$gem" build --silent shmring.gemspec)
gemfile=$work/src/shmring-$SHMRING_VERSION.gem
test -f "$gemfile" || { ls "$work/src" >&2; echo "gem build made no shmring-$SHMRING_VERSION.gem" >&2; exit 1; }

# The gem goes into a GEM_HOME of its own; Debian's gems (minitest) stay on the path.
system_gems=$("$ruby" -e 'print Gem.path.join(":")')
export GEM_HOME="$work/gems" GEM_PATH="$work/gems:$system_gems"
unset RUBYLIB LD_LIBRARY_PATH
PKG_CONFIG_PATH=$(dirname "$pc") "$gem" install --local --no-document "$gemfile"

cd "$work"
"$ruby" -e '
gem "shmring"
require "shmring"
so = $LOADED_FEATURES.grep(%r{/shmring/shmring\.so\z}).first
abort "not the installed gem: #{so}" unless so&.start_with?(ENV["GEM_HOME"])
versions = [Gem.loaded_specs["shmring"].version.to_s, Shmring::VERSION, Shmring::LIBRARY_VERSION]
abort "versions #{versions}" unless versions == [ENV["SHMRING_VERSION"]] * 3
library = File.readlines("/proc/self/maps").grep(/libshmring\.so/).first
abort "library #{library}" unless library&.include?(ENV["GEM_HOME"].sub(%r{/gems\z}, "/prefix/"))
puts "installed #{so} #{Shmring::VERSION}"'
"$ruby" -w -e '
gem "shmring"
require "shmring"
so = $LOADED_FEATURES.grep(%r{/shmring/shmring\.so\z}).first
abort "not the installed gem: #{so}" unless so&.start_with?(ENV["GEM_HOME"])
# minitest runs at exit with ARGV as its options: the files leave it first.
source_dir = ARGV.shift
files = ARGV.map { |f| File.join(source_dir, f) }
ARGV.clear
files.each { |f| load f }' \
    "$source_dir" "$@"
