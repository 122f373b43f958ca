"""Builds the C extension shmring._shmring against an installed libshmring.

The compiler and linker flags, and the package's version (the library's), come
from `pkg-config shmring` (set PKG_CONFIG_PATH for a libshmring installed under
another prefix). When libshmring's directory is
not one the dynamic linker searches, it is recorded as the module's run path, so
the installed module finds the library it was built against.
"""

import os.path
import shlex
import subprocess

from setuptools import Extension, setup

SYSTEM_LIBDIRS = {"/lib", "/usr/lib", "/lib64", "/usr/lib64",
                  "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"}


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args, "shmring"], check=True,
                             capture_output=True, text=True).stdout
    except FileNotFoundError:
        raise SystemExit("pkg-config is needed to find libshmring (apt-get install pkg-config)")
    except subprocess.CalledProcessError as error:
        raise SystemExit("libshmring not found by pkg-config (install it, or set "
                         "PKG_CONFIG_PATH to its lib/pkgconfig directory):\n" + error.stderr)
    return shlex.split(out)


# The package takes the library's version: CMake's project(VERSION), which it
# writes into shmring.pc and into the header the module is compiled against.
version = pkg_config("--modversion")[0]
cflags = pkg_config("--cflags")
libs = pkg_config("--libs")
libdir = pkg_config("--variable=libdir")
runtime_dirs = [os.path.normpath(d) for d in libdir
                if os.path.normpath(d) not in SYSTEM_LIBDIRS]

setup(
    version=version,
    ext_modules=[
        Extension(
            "shmring._shmring",
            sources=["src/shmring/_shmring.c"],
            include_dirs=[f[2:] for f in cflags if f.startswith("-I")],
            extra_compile_args=[f for f in cflags if not f.startswith("-I")],
            library_dirs=[f[2:] for f in libs if f.startswith("-L")],
            libraries=[f[2:] for f in libs if f.startswith("-l")],
            extra_link_args=[f for f in libs if not f.startswith(("-L", "-l"))],
            runtime_library_dirs=runtime_dirs,
        )
    ]
)
