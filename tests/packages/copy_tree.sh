#!/bin/sh
# Copies the source tree SRC into DEST (created, or emptied first), as a release
# would hold it: in a git checkout the files git tracks or would track, changes not
# yet committed included; elsewhere everything but build directories and .git.
# Sourced by the package tests, which build their packages from such a copy.
# Usage: copy_tree SRC DEST
copy_tree() {
    rm -rf "$2" && mkdir -p "$2" || return 1
    if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$1" && git ls-files -z --cached --others --exclude-standard |
            xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ |
            tar --null -T - -cf -) | tar -xf - -C "$2"
    else
        (cd "$1" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -xf - -C "$2"
    fi
}
