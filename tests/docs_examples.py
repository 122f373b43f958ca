#!/usr/bin/env python3
"""Runs every example of README.md and docs/*.md, as a reader following them would.

The build is installed into a temporary prefix first (`cmake --install`), and every
page runs in a directory of its own, with one bash that keeps its state from block
to block, `ringctl` and the installed library first on the paths, and $SHMRING_DIR
naming a private ring directory (so that the examples never touch /dev/shm).

What each fenced block of a page is, by its info string:

  console   a shell session: each `$ ` line (with its continuation lines and
            here-documents) is run, and what it prints (standard output and error
            together) must be the lines that follow it. In those lines `<word>` (a
            lowercase word or words in angle brackets, such as <pid> or <time>)
            stands for any text within the line, and a line `...` alone for any
            number of lines. The private ring directory and the free ports the
            runner chose are shown as the docs show them: /dev/shm, and the port
            the page names.
  sh, bash  commands, run as they are; each must exit 0.
  text      output or a picture, shown and not run; so is a MyST directive
            ({toctree}, ...).
  other     (c, json, python, nginx, php, ...) must be written to a file by a
            directive (below) and used by a later block, or skipped with a reason.

A block may be preceded by one HTML comment, which neither GitHub nor Sphinx shows:

  <!-- docs-examples: file NAME -->      write the block to NAME in the page's
                                         directory (not run by itself)
  <!-- docs-examples: instead COMMAND --> run COMMAND in place of the block (a
                                         server started as the test must start it:
                                         in the foreground of nothing, on a free port)
  <!-- docs-examples: skip REASON -->    do not run the block; the reason is printed

Usage: docs_examples.py --source DIR --build DIR [--no-bindings] [PAGE...]
Exit status: 0 when every example ran as shown, 1 otherwise.
"""
import argparse
import glob
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

DIRECTIVE = re.compile(r"^<!--\s*docs-examples:\s*(file|instead|skip)\s+(.*?)\s*-->$")
FENCE = re.compile(r"^(`{3,})\s*([^`\s]*)\s*$")
PLACEHOLDER = re.compile(r"<[a-z][a-z0-9 _-]*>")
# Ports the docs use for servers; each is replaced by a free one.
DOC_PORTS = ("8000", "8080", "8081", "9000")
COMMAND_SECONDS = int(os.environ.get("DOCS_EXAMPLES_COMMAND_SECONDS", "300"))
# Info strings shown and never run.
DISPLAY = {"text", ""}


class Failure(Exception):
    pass


class Block:
    def __init__(self, page, line, info, text, directive):
        self.page, self.line, self.info, self.text = page, line, info, text
        self.directive = directive

    def where(self):
        return "%s:%d" % (self.page, self.line)


def blocks_of(path, shown):
    """The fenced blocks of a Markdown page, each with the directive before it."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, i, directive = [], 0, None
    while i < len(lines):
        m = FENCE.match(lines[i])
        d = DIRECTIVE.match(lines[i].strip())
        if d:
            directive = (d.group(1), d.group(2))
        elif m:
            fence, info, start = m.group(1), m.group(2), i + 1
            i += 1
            while i < len(lines) and lines[i].rstrip() != fence:
                i += 1
            if i == len(lines):
                raise Failure("%s:%d: fence never closed" % (shown, start))
            blocks.append(Block(shown, start, info, "\n".join(lines[start:i]), directive))
            directive = None
        elif lines[i].strip():
            directive = None
        i += 1
    return blocks


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


class Shell:
    """One bash for a page: commands run one after another in its state."""

    def __init__(self, cwd, env):
        self.proc = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.count = 0

    def run(self, command):
        """Runs COMMAND with standard input from /dev/null; returns (output, status)."""
        self.count += 1
        mark = "__docs_examples_%d_%d__" % (os.getpid(), self.count)
        script = "{\n%s\n} </dev/null\nprintf '\\n%s %%d\\n' $?\n" % (command, mark)
        self.proc.stdin.write(script.encode())
        self.proc.stdin.flush()
        data, deadline = b"", time.monotonic() + COMMAND_SECONDS
        pattern = re.compile(rb"\n" + mark.encode() + rb" (\d+)\n$")
        while True:
            m = pattern.search(data)
            if m:
                return data[:m.start()].decode("utf-8", "replace"), int(m.group(1))
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("no answer in %d s" % COMMAND_SECONDS)
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise Failure("the shell exited")
                data += chunk

    def close(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


def session_commands(text):
    """A console block as [(command, expected lines)]."""
    lines, steps, i = text.split("\n"), [], 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise Failure("output before the first command: %r" % lines[i])
        command = [lines[i][2:]]
        i += 1
        heredocs = re.findall(r"<<-?\s*['\"]?(\w+)['\"]?", command[0])
        while command[-1].endswith("\\") and i < len(lines):
            command.append(lines[i].lstrip("> "))
            i += 1
        for end in heredocs:
            while i < len(lines):
                command.append(lines[i])
                i += 1
                if command[-1] == end:
                    break
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        steps.append(("\n".join(command), expected))
    return steps


def line_pattern(expected):
    parts = PLACEHOLDER.split(expected)
    return re.compile("".join(
        re.escape(part) + (".+?" if n < len(parts) - 1 else "")
        for n, part in enumerate(parts)) + "$")


def matches(expected, actual):
    """Whether the actual lines are the expected ones, placeholders and `...` aside."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and bool(line_pattern(expected[0]).match(actual[0])) and \
        matches(expected[1:], actual[1:])


class Page:
    def __init__(self, runner, path, shown):
        self.runner, self.path, self.shown = runner, path, shown
        self.dir = tempfile.mkdtemp(prefix="page.", dir=runner.work)
        os.chmod(self.dir, 0o755)
        self.rings = os.path.join(self.dir, "rings")
        os.mkdir(self.rings, 0o755)
        self.ports = {port: free_port() for port in DOC_PORTS}
        env = dict(runner.env, SHMRING_DIR=self.rings, HOME=self.dir)
        os.symlink(runner.bindings, os.path.join(self.dir, "bindings"))
        self.shell = Shell(self.dir, env)

    def to_run(self, text):
        for doc_port, port in self.ports.items():
            text = re.sub(r"(?<=[:=' ])%s\b" % doc_port, port, text)
        return text

    def as_shown(self, text):
        text = text.replace(self.rings, "/dev/shm").replace(self.dir, "/home/user")
        for doc_port, port in self.ports.items():
            text = re.sub(r"\b%s\b" % port, doc_port, text)
        return text

    def run_block(self, block):
        kind, arg = block.directive or (None, None)
        if kind == "skip":
            self.runner.skipped.append("%s: %s" % (block.where(), arg))
            return
        if kind == "file":
            with open(os.path.join(self.dir, arg), "w", encoding="utf-8") as out:
                out.write(self.to_run(block.text) + "\n")
            return
        if kind == "instead":
            self.check_command(block, arg, None)
            return
        if block.info == "console":
            for command, expected in session_commands(block.text):
                self.check_command(block, command, expected)
        elif block.info in ("sh", "bash"):
            self.check_command(block, block.text, None)
        elif block.info not in DISPLAY and not block.info.startswith("{"):
            raise Failure("%s: a %s block that is neither written to a file nor skipped"
                          % (block.where(), block.info))

    def check_command(self, block, command, expected):
        try:
            output, status = self.shell.run(self.to_run(command))
        except Failure as e:
            raise Failure("%s: `%s`: %s" % (block.where(), command, e))
        actual = [line.rstrip() for line in self.as_shown(output).split("\n")]
        while actual and not actual[-1]:
            actual.pop()
        self.runner.commands += 1
        if expected is None:
            if status != 0:
                raise Failure("%s: `%s` exited %d:\n%s" % (block.where(), command, status,
                                                           "\n".join(actual)))
            return
        expected = [line.rstrip() for line in expected]
        while expected and not expected[-1]:
            expected.pop()
        if not matches(expected, actual):
            raise Failure("%s: `%s` printed (exit %d):\n%s\nwhere the page shows:\n%s" % (
                block.where(), command, status, "\n".join(actual), "\n".join(expected)))
        if status != 0 and not expected:
            raise Failure("%s: `%s` exited %d and the page shows no output"
                          % (block.where(), command, status))

    def close(self):
        # Servers a page started write their pid files into its directory.
        for pidfile in glob.glob(os.path.join(self.dir, "*.pid")):
            try:
                os.kill(int(open(pidfile).read().split()[0]), signal.SIGTERM)
            except (ValueError, IndexError, ProcessLookupError, OSError):
                pass
        self.shell.close()
        # Destroying the page's rings removes their load boards: System V segments,
        # which would outlive the directory the runner deletes (a page that failed
        # half-way has not destroyed its rings itself).
        env = dict(self.runner.env, SHMRING_DIR=self.rings)
        listed = subprocess.run(["ringctl", "list", "--json"], env=env, check=False,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for ring in json.loads(listed.stdout or "[]") if listed.returncode == 0 else []:
            subprocess.run(["ringctl", "destroy"], env=dict(env, SHMRING_RING=ring["ring"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


class Runner:
    def __init__(self, args):
        self.work = tempfile.mkdtemp(prefix="shmring-docs-examples.")
        os.chmod(self.work, 0o755)
        prefix = os.path.join(self.work, "prefix")
        subprocess.run(["cmake", "--install", args.build, "--prefix", prefix],
                       check=True, stdout=subprocess.DEVNULL)
        self.env = dict(os.environ)
        self.env.update({
            "PATH": "%s/bin:%s" % (prefix, os.environ.get("PATH", "/usr/bin:/bin")),
            "PKG_CONFIG_PATH": "%s/lib/pkgconfig" % prefix,
            "LD_LIBRARY_PATH": "%s/lib" % prefix,
            "LUA_PATH": "%s/share/lua/5.1/?.lua;;" % prefix,
            "SHMRING_SOURCE": args.source, "SHMRING_PREFIX": prefix,
            "SHMRING_BUILD": args.build, "LC_ALL": "C.UTF-8",
        })
        for name in ("SHMRING_RING", "SHMRING_DIR", "PYTHONPATH"):
            self.env.pop(name, None)
        self.skipped, self.commands = [], 0
        # The bindings' sources, as the README's commands in a checkout find them
        # (./bindings/python): a copy, since building a binding writes into it.
        self.bindings = os.path.join(self.work, "bindings")
        shutil.copytree(os.path.join(args.source, "bindings"), self.bindings)

    def run_page(self, path, shown):
        page = Page(self, path, shown)
        try:
            for block in blocks_of(path, shown):
                page.run_block(block)
        finally:
            page.close()

    def close(self):
        if os.environ.get("DOCS_EXAMPLES_KEEP"):
            print("kept %s" % self.work)
        else:
            shutil.rmtree(self.work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("pages", nargs="*")
    args = parser.parse_args()
    args.source, args.build = os.path.abspath(args.source), os.path.abspath(args.build)
    pages = args.pages or [os.path.join(args.source, "README.md")] + sorted(
        glob.glob(os.path.join(args.source, "docs", "*.md")))
    # ctest's timeout sends SIGTERM: end through the finally blocks, which stop the
    # servers the pages started and remove the work directory.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    runner = Runner(args)
    failures = 0
    try:
        for path in pages:
            shown = os.path.relpath(os.path.abspath(path), args.source)
            try:
                runner.run_page(path, shown)
                print("ok   %s" % shown)
            except Failure as e:
                failures += 1
                print("FAIL %s" % e)
    finally:
        runner.close()
    for skip in runner.skipped:
        print("skipped %s" % skip)
    print("%d pages, %d commands run, %d blocks skipped, %d pages failed"
          % (len(pages), runner.commands, len(runner.skipped), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
