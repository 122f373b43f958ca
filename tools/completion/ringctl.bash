# Bash completion for ringctl: commands, options, option values, ring names (from
# the ring directory) and node names (from `ringctl dump` of the chosen ring).
#
# Adding a command: its name to _ringctl_commands, and a line to
# _ringctl_command_options if it has options of its own (and those that take a value
# to _ringctl_takes_value), or to the argument completion in _ringctl if its
# arguments are node names or files. tests/test_command_drift.sh fails until these
# lists match ringctl's command table.

_ringctl_commands="init load board add remove weight down up show lookup dump check list
readers metrics import destroy sync help"

# Options every command accepts.
_ringctl_global_options="-r --ring --dir --json --help -h --version -V"

# The options of command $1 besides the global ones.
_ringctl_command_options() {
    case $1 in
    init) echo "--algorithm --hash --vnodes --table-size --min-ring-size --max-ring-size --mode --group --workers-group --balance-factor --min-reader --dry-run --wait" ;;
    load) echo "--balance-factor --min-reader --dry-run --wait" ;;
    board) echo "--balance-factor --nodes --slots --wait" ;;
    remove | weight | down | up | destroy) echo "--dry-run --wait" ;;
    add) echo "--weight --hash-key --dry-run --wait" ;;
    lookup) echo "-n -z --stdin --owner" ;;
    show | dump | check | list | readers) echo "--owner" ;;
    sync) echo "--etcd --key --prefix --file --state --metrics --once --backoff-max --cacert --cert --cert-key --user --password-file --dir" ;;
    metrics) echo "--all --owner" ;;
    import) echo "--upstream --pool --backend" ;;
    esac
}

# Whether option $1 takes a value.
_ringctl_takes_value() {
    case $1 in
    -r | --ring | --dir | --wait | --owner | --algorithm | --hash | --vnodes | \
        --table-size | --min-ring-size | --max-ring-size | --mode | --group | --weight | \
        --hash-key | -n | --upstream | --pool | --backend | --etcd | --key | --prefix | --file | \
        --state | --metrics | --backoff-max | --cacert | --cert | --cert-key | --user | \
        --password-file | --workers-group | --balance-factor | --min-reader | --nodes | \
        --slots) return 0 ;;
    esac
    return 1
}

# The ring names in directory $1: its entries shmring.NAME.
_ringctl_rings() {
    local entry
    for entry in "$1"/shmring.*; do
        [[ -d $entry ]] && printf '%s\n' "${entry##*/shmring.}"
    done
}

# The node names of ring $2 in directory $1, from `ringctl dump` ($3: the ringctl
# to run). Names are JSON strings there; \" and \\ are the escapes a name can need.
_ringctl_nodes() {
    local line name
    "$3" --dir "$1" -r "$2" dump 2>/dev/null | while IFS= read -r line; do
        if [[ $line =~ ^[[:space:]]*\"name\":\ \"(.*)\",?$ ]]; then
            name=${BASH_REMATCH[1]}
            name=${name//\\\"/\"}
            name=${name//\\\\/\\}
            printf '%s\n' "$name"
        fi
    done
}

# Sets COMPREPLY to the lines of $1 that start with $2, quoted for the shell.
_ringctl_reply() {
    local candidate
    COMPREPLY=()
    while IFS= read -r candidate; do
        [[ -n $candidate && $candidate == "$2"* ]] || continue
        if [[ $candidate == *[[:space:]\'\"\\\$\`]* ]]; then
            printf -v candidate '%q' "$candidate"
        fi
        COMPREPLY+=("$candidate")
    done <<<"$1"
}

_ringctl() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # Bash splits --dir=DIR at the '=' (it is in COMP_WORDBREAKS): "--dir" "=" "DIR".
    if [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    elif [[ $cur == "=" ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        cur=""
    fi
    local ringctl=${COMP_WORDS[0]}
    local directory=${SHMRING_DIR:-/dev/shm} ring=${SHMRING_RING:-default}
    local command="" arguments=0 i word

    # What the words before the cursor say: the command, the ring, the directory,
    # and how many arguments the command has so far.
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if _ringctl_takes_value "$word"; then
            # The value is the next word, or the one after "=" (--dir=DIR).
            [[ ${COMP_WORDS[i + 1]-} == "=" ]] && ((i++))
            case $word in
            -r | --ring) ring=${COMP_WORDS[i + 1]-} ;;
            --dir) directory=${COMP_WORDS[i + 1]-} ;;
            esac
            ((i++))
        elif [[ $word != -* ]]; then
            if [[ -z $command ]]; then
                command=$word
            else
                ((arguments++))
            fi
        fi
    done

    case $prev in
    -r | --ring)
        _ringctl_reply "$(_ringctl_rings "$directory")" "$cur"
        return
        ;;
    --dir)
        COMPREPLY=($(compgen -d -- "$cur"))
        return
        ;;
    --algorithm)
        _ringctl_reply $'ring\nmaglev\nketama\ntwemproxy\nnginx\nlibketama\nenvoy-maglev\nenvoy-ring\nhaproxy\nrendezvous\njump\nuhashring\nhashring\ndalli\nspymemcached\ngroupcache' "$cur"
        return
        ;;
    --hash)
        _ringctl_reply $'xxh3\nmd5\ncrc32\nfnv1a\nmurmur3\nfnv1a_64\ncrc16\ncrc32a\nfnv1_32\nfnv1_64\nfnv1a_32\nhsieh\njenkins\nmurmur\none_at_a_time\nxxh64\nmurmur2\nmurmur3_32\nmurmur3_128\nsdbm\ndjb2\nwt6\nsdbm_avalanche\ndjb2_avalanche\nwt6_avalanche\ncrc32_avalanche\nketama\nsha1\nsha256\nsha512\nnative' "$cur"
        return
        ;;
    --mode)
        _ringctl_reply $'0644\n0640\n0604\n0600' "$cur"
        return
        ;;
    --group | --workers-group)
        COMPREPLY=($(compgen -g -- "$cur"))
        return
        ;;
    --owner)
        COMPREPLY=($(compgen -u -- "$cur"))
        return
        ;;
    --wait | --vnodes | --table-size | --min-ring-size | --max-ring-size | --weight | \
        --hash-key | -n | --upstream | --pool | --backend | --balance-factor | --min-reader | \
        --nodes | --slots)
        COMPREPLY=()
        return
        ;;
    esac

    if [[ $cur == -* ]]; then
        local options="$_ringctl_global_options $(_ringctl_command_options "$command")"
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
        return
    fi
    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$_ringctl_commands" -- "$cur"))
        return
    fi
    case $command in
    remove | weight | down | up)
        if ((arguments == 0)); then
            _ringctl_reply "$(_ringctl_nodes "$directory" "$ring" "$ringctl")" "$cur"
            return
        fi
        ;;
    load)
        if ((arguments == 0)); then
            COMPREPLY=($(compgen -f -- "$cur"))
            return
        fi
        ;;
    board)
        if ((arguments == 0)); then
            COMPREPLY=($(compgen -g -W none -- "$cur"))
            return
        fi
        ;;
    import)
        if ((arguments == 0)); then
            _ringctl_reply $'nginx\ntwemproxy\nlibketama\nhaproxy' "$cur"
            return
        fi
        if ((arguments == 1)); then
            COMPREPLY=($(compgen -f -- "$cur"))
            return
        fi
        ;;
    esac
    COMPREPLY=()
}

complete -F _ringctl ringctl
