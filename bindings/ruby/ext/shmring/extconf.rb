# frozen_string_literal: true

# Makes the Makefile of the extension shmring/shmring against an installed libshmring:
# found with pkg-config (PKG_CONFIG_PATH for another prefix), or where
# --with-shmring-dir, --with-shmring-include and --with-shmring-lib say, e.g.
#   gem install ./shmring-X.Y.Z.gem -- --with-shmring-dir=/opt/shmring
require "mkmf"

dir_config("shmring")
# pkg-config gives the flags and, for a library outside the linker's default path, the
# run path the extension then records (as the Python package's setup.py does).
if (flags = pkg_config("shmring"))
  libdir = `#{ENV.fetch("PKG_CONFIG", "pkg-config")} --variable=libdir shmring`.strip
  $LDFLAGS << " -Wl,-rpath,#{libdir}" unless libdir.empty? || %w[/usr/lib /lib].include?(libdir)
end
abort "shmring.h not found: install libshmring (cmake --install) or pass --with-shmring-dir" unless have_header("shmring.h")
abort "libshmring not found: install it or pass --with-shmring-dir" unless have_library("shmring", "shmring_lookup_id_versioned", "shmring.h")

$CFLAGS << " -std=gnu11 -Wall -Wextra -Wno-unused-parameter"
$CFLAGS << " #{ENV["SHMRING_EXTRA_CFLAGS"]}" if ENV["SHMRING_EXTRA_CFLAGS"]
create_makefile("shmring/shmring")
