"""Builds the C extension shmring._shmring, in one of two ways.

Against an installed libshmring (the default in the source tree): the compiler and
linker flags, and the package's version (the library's), come from `pkg-config
shmring` (set PKG_CONFIG_PATH for a libshmring installed under another prefix). When
libshmring's directory is not one the dynamic linker searches, it is recorded as the
module's run path, so the installed module finds the library it was built against.

Bundled (SHMRING_BUNDLED=1, and by default when building from the sdist, which
always carries the sources): the reader's own modules from lib/ are compiled into
the extension, as pyzmq bundles libzmq, so the package needs no libshmring. They are
built as a reader of serialized handles alone (SHMRING_READER_SERIALIZED_ONLY: the
module opens its handles so anyway), which needs no liburcu-bp, and with hidden
symbols, so that the extension exports only PyInit__shmring and a process may load
the system's libshmring too. Building it needs Python's, nettle's and xxHash's
headers (python3-dev nettle-dev libxxhash-dev) and liburcu's (liburcu-dev, for its
atomic-access macros: nothing of liburcu is linked). The package's version is the
tree's, CMake's project(VERSION), which the sdist carries in shmring_version.h.
"""

import os
import re
import shlex
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
# Where the sdist carries the bundled sources: lib/, include/ as in the tree.
BUNDLED = os.path.join(HERE, "bundled")
TREE = os.path.normpath(os.path.join(HERE, "..", ".."))

SYSTEM_LIBDIRS = {"/lib", "/usr/lib", "/lib64", "/usr/lib64",
                  "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"}


def bundled_mode():
    setting = os.environ.get("SHMRING_BUNDLED", "")
    if setting not in ("", "0", "1"):
        raise SystemExit("SHMRING_BUNDLED must be 0 (link the installed libshmring) "
                         "or 1 (compile the reader in), not %r" % setting)
    if setting:
        return setting == "1"
    return os.path.isdir(BUNDLED)


def pkg_config(package, *args):
    try:
        out = subprocess.run(["pkg-config", *args, package], check=True,
                             capture_output=True, text=True).stdout
    except FileNotFoundError:
        raise SystemExit("pkg-config is needed to find %s (apt-get install pkg-config)"
                         % package)
    except subprocess.CalledProcessError as error:
        raise SystemExit("%s not found by pkg-config (install it, or set "
                         "PKG_CONFIG_PATH to its lib/pkgconfig directory):\n%s"
                         % (package, error.stderr))
    return shlex.split(out)


def reader_sources(tree):
    """The lib/ modules of libshmring, as lib/CMakeLists.txt lists them: the modules
    both libraries share and the reader's own."""
    with open(os.path.join(tree, "lib", "CMakeLists.txt")) as f:
        cmake = f.read()
    sources = []
    for name in ("SHMRING_COMMON_SOURCES", "SHMRING_READER_SOURCES"):
        listed = re.search(r"set\(%s\s+([^)]*)\)" % name, cmake)
        if listed is None:
            raise SystemExit("lib/CMakeLists.txt sets no %s" % name)
        sources += listed.group(1).split()
    return ["lib/" + source for source in sources]


def tree_version(tree):
    with open(os.path.join(tree, "CMakeLists.txt")) as f:
        found = re.search(r"project\(shmring\s+VERSION\s+(\d+)\.(\d+)\.(\d+)", f.read())
    if found is None:
        raise SystemExit("no project(shmring VERSION x.y.z) in CMakeLists.txt")
    return found.groups()


def version_header(tree):
    """include/shmring_version.h as CMake configures it from project(VERSION)."""
    major, minor, patch = tree_version(tree)
    with open(os.path.join(tree, "include", "shmring_version.h.in")) as f:
        text = f.read()
    for name, value in (("PROJECT_VERSION_MAJOR", major), ("PROJECT_VERSION_MINOR", minor),
                        ("PROJECT_VERSION_PATCH", patch),
                        ("PROJECT_VERSION", "%s.%s.%s" % (major, minor, patch))):
        text = text.replace("@%s@" % name, value)
    return text


def bundled_files(tree):
    """The bundled sources and every header they include, found through their
    #include "..." lines, the list of them and the license, as paths relative to
    TREE."""
    files = reader_sources(tree)
    pending = list(files)
    while pending:
        path = pending.pop()
        with open(os.path.join(tree, path)) as f:
            included = re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M)
        for name in included:
            for directory in ("lib", "include"):
                candidate = directory + "/" + name
                if candidate not in files and os.path.isfile(os.path.join(tree, candidate)):
                    files.append(candidate)
                    pending.append(candidate)
                    break
    return sorted(files + ["lib/CMakeLists.txt", "LICENSE"])


def bundled_version():
    with open(os.path.join(BUNDLED, "include", "shmring_version.h")) as f:
        return re.search(r'SHMRING_VERSION_STRING "([^"]+)"', f.read()).group(1)


class sdist_with_reader(sdist):
    """The sdist carries the reader's sources (bundled/) and builds them in."""

    def make_release_tree(self, base_dir, files):
        if not bundled_mode():
            raise SystemExit("the sdist bundles the reader: make it with SHMRING_BUNDLED=1")
        super().make_release_tree(base_dir, files)
        if os.path.isdir(BUNDLED):  # an sdist made from an sdist
            shutil.copytree(BUNDLED, os.path.join(base_dir, "bundled"))
            return
        for path in bundled_files(TREE):
            target = os.path.join(base_dir, "bundled", path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.path.join(TREE, path), target)
        with open(os.path.join(base_dir, "bundled", "include", "shmring_version.h"),
                  "w") as f:
            f.write(version_header(TREE))


class build_ext_with_reader(build_ext):
    """Adds the reader's sources to the extension when it is bundled."""

    def build_extension(self, ext):
        if bundled_mode():
            if os.path.isdir(BUNDLED):
                root, generated = BUNDLED, os.path.join(BUNDLED, "include")
            else:
                root, generated = TREE, os.path.join(self.build_temp, "generated")
                os.makedirs(generated, exist_ok=True)
                with open(os.path.join(generated, "shmring_version.h"), "w") as f:
                    f.write(version_header(TREE))
            ext.sources = ext.sources + [os.path.join(root, source)
                                         for source in reader_sources(root)]
            ext.include_dirs = [generated, os.path.join(root, "include"),
                                os.path.join(root, "lib")] + ext.include_dirs
        super().build_extension(ext)


def bundled_extension():
    flags = pkg_config("nettle", "--cflags") + pkg_config("libxxhash", "--cflags")
    libs = pkg_config("nettle", "--libs") + pkg_config("libxxhash", "--libs")
    return Extension(
        "shmring._shmring",
        sources=["src/shmring/_shmring.c"],
        define_macros=[("_GNU_SOURCE", None), ("SHMRING_READER_SERIALIZED_ONLY", None)],
        include_dirs=[f[2:] for f in flags if f.startswith("-I")],
        # The library's dialect; hidden symbols, so that nothing but the module's
        # init function is exported; and no fused multiply-adds, which would round
        # the placements' float arithmetic differently from their peers (see
        # lib/CMakeLists.txt).
        extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-ffp-contract=off"]
        + [f for f in flags if not f.startswith("-I")],
        library_dirs=[f[2:] for f in libs if f.startswith("-L")],
        libraries=[f[2:] for f in libs if f.startswith("-l")] + ["m"],
    )


def system_extension():
    cflags = pkg_config("shmring", "--cflags")
    libs = pkg_config("shmring", "--libs")
    libdir = pkg_config("shmring", "--variable=libdir")
    runtime_dirs = [os.path.normpath(d) for d in libdir
                    if os.path.normpath(d) not in SYSTEM_LIBDIRS]
    return Extension(
        "shmring._shmring",
        sources=["src/shmring/_shmring.c"],
        include_dirs=[f[2:] for f in cflags if f.startswith("-I")],
        extra_compile_args=[f for f in cflags if not f.startswith("-I")],
        library_dirs=[f[2:] for f in libs if f.startswith("-L")],
        libraries=[f[2:] for f in libs if f.startswith("-l")],
        extra_link_args=[f for f in libs if not f.startswith(("-L", "-l"))],
        runtime_library_dirs=runtime_dirs,
    )


# The package takes the library's version: CMake's project(VERSION), which the
# installed library's shmring.pc carries, and the bundled sources' header.
if bundled_mode():
    version = bundled_version() if os.path.isdir(BUNDLED) else ".".join(tree_version(TREE))
    extension = bundled_extension()
else:
    version = pkg_config("shmring", "--modversion")[0]
    extension = system_extension()

setup(
    version=version,
    ext_modules=[extension],
    cmdclass={"sdist": sdist_with_reader, "build_ext": build_ext_with_reader},
)
