/*
 * The command table: one row per command, in the order the help lists them. Both
 * dispatch and help read it, so a command's synopsis and summary are written here
 * once. No include guard: commands.c includes this file twice, once to declare each
 * handler (int ringctl_cmd_NAME(struct ringctl *)) and once to build the table.
 *
 * A row: COMMAND(NAME, fields of struct ringctl_command); a field left out is zero (no
 * arguments, no options, no ring). Adding a command is a file defining
 * ringctl_cmd_NAME, a row here and a line in tools/CMakeLists.txt.
 */
COMMAND(init, .group = GROUP_CHANGE,
        .synopsis = {"init [--algorithm A] [--hash H] [--vnodes N] [--table-size P] "
                     "[--min-ring-size N] [--max-ring-size N] [--mode M] [--group G] "
                     "[--workers-group G] [--balance-factor C] [--min-reader V]"},
        .summary = "create the ring, published empty as generation 1",
        .options = OPTIONS_CHANGE | OPTION(ALGORITHM) | OPTION(HASH) | OPTION(VNODES) |
                   OPTION(TABLE_SIZE) | OPTION(RING_SIZE) | OPTION(MODE) | OPTION(GROUP) |
                   OPTION(WORKERS_GROUP) | OPTION(BALANCE_FACTOR) | OPTION(MIN_READER),
        .names_ring = true)
COMMAND(load, .group = GROUP_CHANGE, .synopsis = {"load FILE|- [--min-reader V]"},
        .summary = "replace the whole node set with a JSON node set read from FILE (- "
                   "for standard input; an empty node set is refused); nodes that stay "
                   "keep their ids; parameters the file leaves out are kept; creates the "
                   "ring (mode 0644) if it does not exist",
        .min_args = 1, .max_args = 1,
        .options = OPTIONS_CHANGE | OPTION(BALANCE_FACTOR) | OPTION(MIN_READER),
        .names_ring = true)
COMMAND(board, .group = GROUP_CHANGE,
        .synopsis = {"board GROUP [--balance-factor C] [--nodes N] [--slots M]",
                     "board none"},
        .summary = "give the ring a load board for bounded-load leases that GROUP (the "
                   "workers') may write, or change its balance factor; a board of "
                   "another group or of other sizes (--nodes, --slots; by default sized "
                   "for the ring's nodes, or the board's own) is replaced, its counts "
                   "starting at 0; none removes the board (leases become plain lookups)",
        .min_args = 1, .max_args = 1,
        .options = OPTION(WAIT) | OPTION(BALANCE_FACTOR) | OPTION(BOARD_NODES) |
                   OPTION(BOARD_SLOTS),
        .names_ring = true)
COMMAND(add, .group = GROUP_CHANGE,
        .synopsis = {"add NAME ADDRESS [--weight W] [--hash-key K]"},
        .summary = "add an up node with weight W (default 1) and hash key K (default "
                   "none)",
        .min_args = 2, .max_args = 2,
        .options = OPTIONS_CHANGE | OPTION(WEIGHT) | OPTION(HASH_KEY), .names_ring = true)
COMMAND(remove, .group = GROUP_CHANGE, .synopsis = {"remove NAME"},
        .summary = "remove a node", .min_args = 1, .max_args = 1,
        .options = OPTIONS_CHANGE, .names_ring = true)
COMMAND(weight, .group = GROUP_CHANGE, .synopsis = {"weight NAME W"},
        .summary = "change a node's weight (1-65535)", .min_args = 2, .max_args = 2,
        .options = OPTIONS_CHANGE, .names_ring = true)
COMMAND(down, .group = GROUP_CHANGE, .synopsis = {"down NAME"},
        .summary = "mark a node down: its keys move to the other nodes", .min_args = 1,
        .max_args = 1, .options = OPTIONS_CHANGE, .names_ring = true)
COMMAND(up, .group = GROUP_CHANGE, .synopsis = {"up NAME"},
        .summary = "mark a node up again", .min_args = 1, .max_args = 1,
        .options = OPTIONS_CHANGE, .names_ring = true)
COMMAND(show, .group = GROUP_READ, .synopsis = {"show"},
        .summary = "status, parameters and nodes, with each node's share of the keyspace",
        .options = OPTION(OWNER), .names_ring = true)
COMMAND(lookup, .group = GROUP_READ,
        .synopsis = {"lookup [-n N] [-z] KEY...", "lookup [-n N] [-z] --stdin"},
        .summary = "print KEY, then the name and address of the node that owns it (-n: "
                   "of its first N nodes), tab-separated; with --stdin, the same for "
                   "each line of standard input, answered as it arrives and following "
                   "new generations live; a key no node can take is answered, not fatal",
        .max_args = UNLIMITED,
        .options = OPTION(COUNT) | OPTION(STDIN) | OPTION(NUL) | OPTION(OWNER),
        .names_ring = true)
COMMAND(dump, .group = GROUP_READ, .synopsis = {"dump"},
        .summary = "print the node set as JSON, as 'load' reads it",
        .options = OPTION(OWNER), .names_ring = true)
COMMAND(check, .group = GROUP_READ, .synopsis = {"check FILE|-"},
        .summary = "exit 0 if the ring holds exactly the JSON node set of FILE (as "
                   "'load' would leave it), 1 if not, with one line per difference, 2 "
                   "on error",
        .min_args = 1, .max_args = 1, .options = OPTION(OWNER), .names_ring = true)
COMMAND(list, .group = GROUP_READ, .synopsis = {"list"},
        .summary = "print every ring in the ring directory, one per line: name, "
                   "generation, nodes, algorithm (tab-separated); rings it cannot read "
                   "are skipped, each named in a warning on standard error",
        .options = OPTION(OWNER))
COMMAND(readers, .group = GROUP_READ, .synopsis = {"readers"},
        .summary = "every process that maps a version of the ring: pid, command, "
                   "generation, current or superseded, and the memory superseded "
                   "versions keep in use",
        .options = OPTION(OWNER), .names_ring = true)
COMMAND(metrics, .group = GROUP_READ, .synopsis = {"metrics [--all]"},
        .summary = "the ring's metrics (--all: every ring's) in the Prometheus text "
                   "format, for node_exporter's textfile collector",
        .options = OPTION(OWNER) | OPTION(ALL), .names_ring = true)
COMMAND(import, .group = GROUP_OTHER,
        .synopsis = {"import nginx FILE [--upstream NAME]",
                     "import twemproxy FILE [--pool NAME]", "import libketama FILE",
                     "import haproxy FILE [--backend NAME]"},
        .summary = "print the JSON node set, for 'load', that places keys as the peer "
                   "configured in FILE does (- for standard input): an nginx upstream of "
                   "'hash KEY consistent', a twemproxy pool, a libketama server file, "
                   "an HAProxy backend of 'hash-type consistent'; "
                   "what the node set cannot reproduce is an error naming FILE:LINE",
        .min_args = 2, .max_args = 2,
        .options = OPTION(UPSTREAM) | OPTION(POOL) | OPTION(BACKEND), .names_ring = false)
COMMAND(destroy, .group = GROUP_OTHER, .synopsis = {"destroy"},
        .summary = "remove the ring; readers keep their last version",
        .options = OPTIONS_CHANGE, .names_ring = true)
COMMAND(sync, .group = GROUP_OTHER,
        .synopsis = {"sync --etcd URL[,URL...] --key KEY [OPTIONS]",
                     "sync --etcd URL[,URL...] --prefix PREFIX [OPTIONS]",
                     "sync --file PATH [OPTIONS]"},
        .summary = "keep the ring equal to a source of truth, publishing only when it "
                   "changes; one log line per event on standard error; SIGTERM or "
                   "SIGINT: exit 0",
        .options = OPTIONS_SYNC, .names_ring = true)
COMMAND(help, .group = GROUP_OTHER, .synopsis = {"help [COMMAND]"},
        .summary = "print this help, or COMMAND's", .max_args = 1)
