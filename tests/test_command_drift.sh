#!/usr/bin/env bash
# The lists of commands and options kept by hand outside the command table, compared
# with the table as ringctl's own help prints it: the bash completion (commands, each
# command's options, the options that take a value), the completion test's list of
# commands, and the man page's command headings and options. Adding a command or an option to the
# table without them fails here, naming what is missing.
# Usage: test_command_drift.sh RINGCTL COMPLETION COMPLETION_TEST MAN_PAGE
set -uo pipefail
ringctl=$1 completion=$2 completion_test=$3 man_page=$4
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
# Sorted, one a line, the words of "$@".
sorted() { printf '%s\n' $* | sort -u; }

# The commands, from the full help: the first word of each synopsis line in the
# command sections that ringctl knows as a command (the notes there are prose).
help=$("$ringctl" --help) || fail "ringctl --help failed"
table_commands=$(sed -n '/^Commands that change a ring/,/^Options:/p' <<<"$help" |
    sed -nE 's/^  ([a-z]+)( .*)?$/\1/p' | sort -u | while read -r word; do
        "$ringctl" help "$word" >/dev/null 2>&1 && echo "$word"
    done)
[[ -n $table_commands ]] || fail "no commands found in ringctl --help"

# shellcheck source=/dev/null
. "$completion"
[[ $(sorted $_ringctl_commands) == "$table_commands" ]] ||
    fail "completion's _ringctl_commands differ from the table:" \
        "$(diff <(sorted $_ringctl_commands) - <<<"$table_commands")"

expected=$(grep -m1 -E '^expect "[a-z ]+" ""$' "$completion_test" | sed -E 's/^expect "([a-z ]+)" ""$/\1/')
[[ $expected == "$(tr '\n' ' ' <<<"$table_commands" | sed 's/ $//')" ]] ||
    fail "$completion_test's list of commands differs from the table: '$expected'"

# The man page: a heading *NAME* for each command in its command sections.
man_commands=$(sed -n '/^# COMMANDS THAT CHANGE A RING/,/^# OPTIONS/p' "$man_page" |
    sed -nE 's/^\*([a-z]+)\*.*/\1/p' | sort -u)
for command in $table_commands; do
    grep -qx "$command" <<<"$man_commands" || fail "$man_page has no heading for $command"
done

# Each command's own options, from its help ("Options of NAME:"), against the
# completion's; and each option that takes a value, against _ringctl_takes_value.
for command in $table_commands; do
    command_help=$("$ringctl" "$command" --help) || fail "ringctl $command --help failed"
    labels=$(sed -n "/^Options of $command:/,/^\$/p" <<<"$command_help" | grep -E '^  +-')
    own=$(sed -nE 's/^  +(-[a-z], )?(--[a-z-]+|-[a-z]).*/\2/p' <<<"$labels" | sort -u)
    completed=$(for option in $(_ringctl_command_options "$command"); do
        [[ " $_ringctl_global_options " == *" $option "* ]] || printf '%s\n' "$option"
    done | sort -u)
    for option in $own; do
        grep -qF "*$option*" "$man_page" || fail "$man_page does not describe $option"
    done
    [[ $completed == "$own" ]] ||
        fail "completion's options of $command differ from the table:" \
            "$(diff <(echo "$completed") - <<<"$own")"
    while read -r option argument; do
        [[ -z $option || -z $argument || $argument == ' '* ]] && continue
        _ringctl_takes_value "$option" ||
            fail "completion: _ringctl_takes_value does not know $option takes a value"
    done < <(sed -nE 's/^  +(-[a-z], )?(--[a-z-]+|-[a-z])( [A-Z][^ ]*)?.*/\2\3/p' <<<"$labels")
done

((failures == 0)) || exit 1
echo "completion, its test and the man page list the table's commands and options"
