/*
 * End-to-end tests of ringctl (tools/ringctl/), the operator's commands beside the ring's
 * own: version and help, import, each command's --json keys, and readers and metrics (the
 * readers census). Each test runs the built binary (TEST_RINGCTL) with fork and exec,
 * captures its stdout, stderr and exit status, and checks them exactly, together with
 * what the library then reads from the ring.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ringctl_fixture.h"

/* ---- core: each command's happy path ------------------------------------------ */

START_TEST(test_version_and_help)
{
    EXPECT(0, "ringctl " SHMRING_VERSION_STRING "\n", "", "--version");
    EXPECT(0, "ringctl " SHMRING_VERSION_STRING "\n", "", "-V");
    const char *const spellings[][2] = {{"--help", NULL}, {"-h", NULL}, {"help", NULL}};
    for (size_t i = 0; i < 3; i++) {
        struct test_run r;
        RUN(&r, spellings[i][0], spellings[i][1]);
        ck_assert_int_eq(r.status, 0);
        ck_assert_str_eq(r.err, "");
        ck_assert_msg(strncmp(r.out, "Usage: ringctl [OPTIONS] COMMAND [ARGS]\n", 40) ==
                          0,
                      "%s", r.out);
        const char *documented[] = {
            "  init [--algorithm A] [--hash H] [--vnodes N] [--table-size P]",
            "  load FILE|-",
            "  add NAME ADDRESS [--weight W]",
            "  remove NAME",
            "  weight NAME W",
            "  down NAME",
            "  up NAME",
            "  show",
            "  lookup [-n N] [-z] KEY...",
            "  lookup [-n N] [-z] --stdin",
            "  help [COMMAND]",
            "  dump",
            "  list",
            "  destroy",
            "--ring RING",
            "--dir DIR",
            "$SHMRING_DIR",
            "--wait SECONDS",
            "--owner USER",
            "--json",
            "--dry-run",
            "--help",
            "--version",
            "--algorithm A",
            "--hash H",
            "--vnodes N",
            "--table-size P",
            "--mode M",
            "--group G",
            "--weight W",
            "-n N",
            "--stdin",
            "\n  -z  ",
            "0644 (default: everyone),\n"
            "                           0640 (its group), 0604 (others, not the group) "
            "or\n"
            "                           0600 (you only)",
            "a backslash is printed as \\\\, TAB, LF and CR as \\t, \\n\nand \\r",
            "\\xHH (two lowercase hex digits)",
            "\"key_base64\"",
            "Exit status: 0 success, 1 the operation failed, 2 usage error."};
        for (size_t j = 0; j < sizeof(documented) / sizeof(documented[0]); j++)
            ck_assert_msg(strstr(r.out, documented[j]) != NULL, "help lacks '%s'",
                          documented[j]);
        test_run_free(&r);
    }
}
END_TEST

/* import prints the node set of a peer's file, which load takes as it is; a file it
 * cannot reproduce is an error naming FILE:LINE, a misused option a usage error. */
START_TEST(test_import)
{
    test_write_file(temp_file, "http {\n"
                               "  upstream u {\n"
                               "    hash $arg_key consistent;\n"
                               "    server 10.0.0.1:80 weight=2;\n"
                               "    server 10.0.0.2:80 down;\n"
                               "  }\n"
                               "}\n");
    struct test_run r;
    RUN(&r, "import", "nginx", temp_file, "--upstream", "u");
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(r.status, 0);
    test_check_json_text(
        r.out, &TEST_JSON_TEXT("nginx", "crc32", 160, TEST_JSON_NO_TABLE_SIZE,
                               {"10.0.0.1:80", 0, "10.0.0.1:80", NULL, 2, "up"},
                               {"10.0.0.2:80", 1, "10.0.0.2:80", NULL, 1, "down"}));
    /* load takes it whole: the ring answers as the file says. */
    struct test_run loaded;
    RUN_INPUT(&loaded, r.out, "-r", ring, "load", "-");
    ck_assert_int_eq(loaded.status, 0);
    test_run_free(&loaded);
    test_run_free(&r);
    EXPECT(0, "key\t10.0.0.1:80\t10.0.0.1:80\n", "", "-r", ring, "lookup", "key");

    RUN_INPUT(&r, "k1 1\nk2 3\n", "import", "libketama", "-");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"algorithm\": \"libketama\""));
    test_run_free(&r);

    test_write_file(temp_file,
                    "upstream u {\n  hash $k consistent;\n  server a:1 backup;\n}\n");
    EXPECT(
        1, "",
        test_fmt("ringctl: error: %s:3: 'backup' is not supported: nginx refuses it with "
                 "'hash'\n",
                 temp_file),
        "import", "nginx", temp_file);
    EXPECT(1, "", test_fmt("ringctl: error: %s: no upstream 'v'\n", temp_file), "import",
           "nginx", temp_file, "--upstream", "v");
    EXPECT(2, "", "ringctl: error: option '--pool' is for twemproxy files\n", "import",
           "nginx", temp_file, "--pool", "u");
    EXPECT(2, "", "ringctl: error: option '--upstream' is for nginx files\n", "import",
           "libketama", temp_file, "--upstream", "u");
    EXPECT(2, "", "ringctl: error: option '--backend' is for haproxy files\n", "import",
           "nginx", temp_file, "--backend", "u");
    EXPECT(2, "",
           "ringctl: error: unknown format 'envoy' (use nginx, twemproxy, libketama or "
           "haproxy)\n",
           "import", "envoy", temp_file);
    EXPECT(1, "",
           "ringctl: error: cannot read '/nonexistent/x.conf': No such file or "
           "directory\n",
           "import", "nginx", "/nonexistent/x.conf");
}
END_TEST

/* Fails unless OBJECT's keys are exactly the comma-separated EXPECTED, in order. */
static void assert_keys(const json_t *object, const char *expected)
{
    ck_assert_msg(json_is_object(object), "not an object");
    char keys[1024] = "";
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)object, key, value)
    {
        if (keys[0] != '\0')
            strcat(keys, ",");
        strcat(keys, key);
    }
    ck_assert_str_eq(keys, expected);
}

/* Runs ringctl with the arguments that follow (--json among them), expecting exit 0
 * and one JSON document, and returns it. */
#define JSON_OF(...) json_output((const char *const[]){__VA_ARGS__, NULL})

static json_t *json_output(const char *const *args)
{
    struct test_run r;
    test_run_as(&r, (uid_t)-1, NULL, args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    json_error_t error;
    json_t *root = json_loads(r.out, 0, &error);
    ck_assert_msg(root != NULL, "%s: %s", error.text, r.out);
    test_run_free(&r);
    return root;
}

#define CHANGE_KEYS "ring,generation,action,dry_run,changed"
#define READERS_LINE_KEYS                                                                \
    "processes,superseded_processes,superseded_versions,superseded_bytes,"               \
    "processes_hidden,processes_unverified,processes_too_large,processes_stuck"
#define READERS_KEYS                                                                     \
    "ring,generation,readers,uncounted,versions,superseded_versions,superseded_bytes,"   \
    "processes_inspected,processes_hidden,stuck_processes"
#define READER_KEYS                                                                      \
    "pid,command,generation,current,mapped_bytes,descriptors,uid,reader_release,"        \
    "stuck_format"
#define UNCOUNTED_KEYS "pid,command,uid,reason,generation,mapped_bytes,descriptors"
#define SAMPLE_KEYS "moved_fraction"

/* Each command's --json keys are the same in every case (docs/json-output.md's schema).
 */
START_TEST(test_json_key_sets)
{
    ck_assert_int_eq(setenv("SHMRING_DIR", make_ring_directory(), 1), 0);
    const char *init_keys = CHANGE_KEYS ",algorithm,hash,vnodes,table_size," SAMPLE_KEYS;
    const char *node_keys = CHANGE_KEYS ",node," SAMPLE_KEYS;
    const char *weight_keys = CHANGE_KEYS ",node,previous_weight," SAMPLE_KEYS;
    const char *load_keys =
        CHANGE_KEYS ",nodes,added,removed,changed_nodes,params_changed," SAMPLE_KEYS;
    const char *show_keys =
        "ring,generation,algorithm,hash,vnodes,table_size,min_ring_size,"
        "max_ring_size,points,"
        "fingerprint,size,up,publish_count,publisher_pid,"
        "published_at,owner,mode,nodes,readers,board";
    const char *lookup_keys = "key,key_base64,nodes,error";
    json_t *j;

    j = JSON_OF("--json", "-r", ring, "init", "--dry-run");
    assert_keys(j, init_keys);
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "init");
    assert_keys(j, init_keys);
    json_decref(j);
    /* show of a ring with nothing but an empty version, then with nodes. */
    j = JSON_OF("--json", "-r", ring, "show");
    assert_keys(j, show_keys);
    json_decref(j);
    const char *add[] = {"--json", "-r", ring, "add", "a", "a:1", "--dry-run", NULL};
    j = json_output(add);
    assert_keys(j, node_keys);
    ck_assert(json_is_real(json_object_get(j, "moved_fraction")));
    json_decref(j);
    add[6] = NULL;
    j = json_output(add);
    assert_keys(j, node_keys);
    ck_assert(json_is_null(json_object_get(j, "moved_fraction")));
    assert_keys(json_object_get(j, "node"), "id,name,address,weight,state");
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "add", "b", "b:1");
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "show");
    assert_keys(j, show_keys);
    assert_keys(json_array_get(json_object_get(j, "nodes"), 0),
                "id,name,address,weight,state,share");
    assert_keys(json_object_get(j, "readers"), READERS_LINE_KEYS);
    json_decref(j);
    /* readers: the census (its entries' keys: test_readers_census_output). */
    j = JSON_OF("--json", "-r", ring, "readers");
    assert_keys(j, READERS_KEYS);
    json_decref(j);
    /* weight: changed, unchanged, dry run. */
    const char *const weights[][2] = {{"2", NULL}, {"2", NULL}, {"3", "--dry-run"}};
    for (size_t i = 0; i < 3; i++) {
        j = JSON_OF("--json", "-r", ring, "weight", "a", weights[i][0], weights[i][1]);
        assert_keys(j, weight_keys);
        ck_assert_int_eq(json_is_true(json_object_get(j, "changed")), i != 1);
        json_decref(j);
    }
    const char *const states[] = {"down", "down", "up", "up"};
    for (size_t i = 0; i < 4; i++) {
        j = JSON_OF("--json", "-r", ring, states[i], "a");
        assert_keys(j, node_keys);
        json_decref(j);
    }
    test_write_file(temp_file, "{\"nodes\": [{\"name\": \"a\"}]}");
    for (int i = 0; i < 3; i++) {
        j = JSON_OF("--json", "-r", ring, "load", temp_file, i == 0 ? "--dry-run" : NULL);
        assert_keys(j, load_keys);
        json_decref(j);
    }
    j = JSON_OF("--json", "-r", ring, "remove", "a", "--dry-run");
    assert_keys(j, node_keys);
    json_decref(j);
    /* A moved share is printed with the fewest digits that read back as the same
     * double (0.35642, never 0.35642000000000001). */
    struct test_run r;
    RUN(&r, "--json", "-r", ring, "add", "c", "c:1", "--dry-run");
    const char *number = strstr(r.out, "\"moved_fraction\":");
    ck_assert_ptr_nonnull(number);
    number += strlen("\"moved_fraction\":");
    char *end;
    double share = strtod(number, &end);
    ck_assert_msg(*end == '}' && share > 0.0 && share < 1.0, "%s", r.out);
    int significant = (int)strspn(number + 2, "0123456789"); /* after "0." */
    char shorter[400];
    snprintf(shorter, sizeof(shorter), "%.*g", significant - 1, share);
    ck_assert_msg(strtod(shorter, NULL) != share, "%s: %s also reads back", r.out,
                  shorter);
    test_run_free(&r);
    /* check: {same, differences}, each difference {kind, what, ring, file}. */
    RUN(&r, "-r", ring, "dump");
    test_write_file(temp_file, r.out);
    test_run_free(&r);
    j = JSON_OF("--json", "-r", ring, "check", temp_file);
    assert_keys(j, "same,differences");
    ck_assert(json_is_true(json_object_get(j, "same")));
    ck_assert_uint_eq(json_array_size(json_object_get(j, "differences")), 0);
    json_decref(j);
    test_write_file(temp_file,
                    "{\"nodes\": [{\"name\": \"zz\", \"address\": \"zz:1\"}]}");
    RUN(&r, "--json", "-r", ring, "check", temp_file);
    ck_assert_int_eq(r.status, 1);
    j = json_loads(r.out, 0, NULL);
    ck_assert_msg(j != NULL, "%s", r.out);
    test_run_free(&r);
    assert_keys(j, "same,differences");
    json_t *differences = json_object_get(j, "differences");
    ck_assert_uint_ge(json_array_size(differences), 2); /* zz added, the others gone */
    for (size_t i = 0; i < json_array_size(differences); i++)
        assert_keys(json_array_get(differences, i), "kind,what,ring,file");
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "lookup", "k");
    assert_keys(j, lookup_keys);
    assert_keys(json_array_get(json_object_get(j, "nodes"), 0), "id,name,address,weight");
    json_decref(j);
    j = JSON_OF("--json", "list");
    assert_keys(json_array_get(j, 0), "ring,generation,nodes,up,algorithm");
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "destroy", "--dry-run");
    assert_keys(j, CHANGE_KEYS "," SAMPLE_KEYS);
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "destroy");
    assert_keys(j, CHANGE_KEYS "," SAMPLE_KEYS);
    ck_assert(json_is_null(json_object_get(j, "generation")));
    json_decref(j);
}
END_TEST

/* help COMMAND and COMMAND --help print that command's usage only; a mistyped
 * command gets a suggestion. */
START_TEST(test_command_help)
{
    struct test_run r;
    RUN(&r, "add", "--help");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    static const char usage[] =
        "Usage: ringctl [OPTIONS] add NAME ADDRESS [--weight W] [--hash-key K]\n\n"
        "  add an up node with weight W (default 1) and hash key K (default none)\n";
    ck_assert_msg(strncmp(r.out, usage, strlen(usage)) == 0, "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "      --weight W "));
    ck_assert_ptr_nonnull(strstr(r.out, "      --hash-key K "));
    ck_assert_ptr_nonnull(strstr(r.out, "      --dry-run "));
    ck_assert_ptr_null(strstr(r.out, "--algorithm"));
    ck_assert_ptr_null(strstr(r.out, "  remove NAME"));
    struct test_run h;
    RUN(&h, "help", "add");
    ck_assert_int_eq(h.status, 0);
    ck_assert_str_eq(h.out, r.out);
    test_run_free(&h);
    RUN(&h, "-h", "add", "x");
    ck_assert_str_eq(h.out, r.out);
    test_run_free(&h);
    test_run_free(&r);
    EXPECT(2, "",
           "ringctl: error: too many arguments for 'help' (usage: ringctl help "
           "[COMMAND])\n",
           "help", "add", "remove");
    EXPECT(2, "", "ringctl: error: unknown command 'frob' (see 'ringctl --help')\n",
           "help", "frob");
    EXPECT(2, "",
           "ringctl: error: unknown command 'shwo' (did you mean 'show'? see 'ringctl "
           "--help')\n",
           "shwo");
    EXPECT(2, "",
           "ringctl: error: unknown command 'dwon' (did you mean 'down'? see 'ringctl "
           "--help')\n",
           "-r", ring, "dwon", "n");
    EXPECT(2, "",
           "ringctl: error: unknown command 'dest' (did you mean 'destroy'? see 'ringctl "
           "--help')\n",
           "dest");
    EXPECT(2, "",
           "ringctl: error: unknown command 'lokup' (did you mean 'lookup'? see 'ringctl "
           "--help')\n",
           "lokup", "--help");
}
END_TEST

/*
 * Readers map everything read-only, the owner's readers as another user's: nothing
 * a reader maps could be written through its mapping. Checked in /proc/PID/maps of a
 * running `lookup --stdin`.
 */
static void assert_maps_read_only(uid_t user)
{
    struct test_child c = test_child_start(
        (const char *const[]){"-r", ring, "lookup", "--stdin", NULL}, user);
    ck_assert_str_eq(ask(&c, "k"), owner_line("k"));
    FILE *maps = fopen(test_fmt("/proc/%ld/maps", (long)c.pid), "r");
    ck_assert_ptr_nonnull(maps);
    char line[1024];
    char directory[600];
    snprintf(directory, sizeof(directory), "%s/", test_ring_path(ring));
    int mapped = 0;
    while (fgets(line, sizeof(line), maps) != NULL) {
        if (strstr(line, directory) == NULL)
            continue;
        mapped++;
        /* "START-END PERMS ...": shared and readable, never writable. */
        const char *perms = strchr(line, ' ');
        ck_assert_ptr_nonnull(perms);
        ck_assert_msg(strncmp(perms + 1, "r--s", 4) == 0, "%s", line);
    }
    fclose(maps);
    ck_assert_int_ge(mapped, 1); /* at least the current version */
    close(c.in);
    close(c.out);
    close(c.err);
    ck_assert_int_eq(test_child_wait(&c), 0);
}

START_TEST(test_readers_map_read_only)
{
    make_ring();
    assert_maps_read_only((uid_t)-1);
    if (geteuid() == 0)
        assert_maps_read_only(TEST_NOBODY);
}
END_TEST

/* ---- The readers census in readers, show and metrics ------------------------------ */

/* A process of this test's that holds something open until the test ends it. */
struct holder {
    pid_t pid;
    int to; /* closing it ends the holder */
};

/*
 * Forks a holder that opens PATH, maps it whole when MAP, keeps the descriptor when
 * KEEP_FD, says so on a pipe and waits until holder_stop(). With SQUAT_DIR, it first
 * mounts a tmpfs of its own over SQUAT_DIR in a mount namespace of its own and writes
 * PATH there, as issue 23's squatter does (all gone with the holder).
 */
static struct holder holder_start(const char *path, bool map, bool keep_fd,
                                  const char *squat_dir)
{
    int ready[2], hold[2];
    ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(ready[0]);
        close(hold[1]);
        if (squat_dir != NULL) {
            int planted = -1;
            if (unshare(CLONE_NEWNS) != 0 ||
                mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
                mount("check_ringctl", squat_dir, "tmpfs", 0, "size=64k") != 0 ||
                (planted = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) <
                    0 ||
                write(planted, "planted", 7) != 7)
                _exit(1);
            close(planted);
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 ||
            (map &&
             mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED))
            _exit(1);
        if (!keep_fd)
            close(fd);
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        char byte;
        while (read(hold[0], &byte, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    char byte;
    ck_assert_int_eq(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    return (struct holder){.pid = pid, .to = hold[1]};
}

static void holder_stop(struct holder *h)
{
    close(h->to);
    int status;
    ck_assert_int_eq(waitpid(h->pid, &status, 0), h->pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Removes from TEXT what processes outside this test may add to a census: lines of
 * the "Not counted" list with another pid than PIDS' (a process of another test with
 * more mappings than a census reads), the paragraph on processes that could not be
 * inspected, and their parts of a readers line. */
static void census_only_mine(char *text, const pid_t *pids, size_t count)
{
    char *out = text;
    bool uncounted = false;
    for (char *line = text; *line != '\0';) {
        char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) + 1 : strlen(line);
        bool keep = true;
        if (strncmp(line, "Not counted", 11) == 0)
            uncounted = true;
        else if (len == 1)
            uncounted = false;
        else if (uncounted) {
            keep = false;
            for (size_t i = 0; i < count; i++)
                keep = keep || strtol(line, NULL, 10) == (long)pids[i];
        }
        char after = line[len];
        line[len] = '\0';
        bool hidden = strstr(line, " could not be inspected: ") != NULL;
        line[len] = after;
        /* That paragraph and its blank line. */
        if (hidden && out - text >= 2 && out[-1] == '\n' && out[-2] == '\n') {
            out--;
            keep = false;
        }
        if (keep) {
            memmove(out, line, len);
            out += len;
        }
        line += len;
    }
    *out = '\0';
    /* "; 2 processes not inspectable", "; 1 process too large to inspect" */
    static const char *const tails[] = {" not inspectable", " too large to inspect"};
    for (size_t t = 0; t < COUNT_OF(tails); t++) {
        for (char *tail = text; (tail = strstr(tail, tails[t])) != NULL;) {
            /* Only "; N processes ..." of a readers line, nothing of a heading. */
            char *start = tail;
            while (start > text && strchr(";\n(", start[-1]) == NULL)
                start--;
            if (start == text || start[-1] != ';') {
                tail++;
                continue;
            }
            start--;
            memmove(start, tail + strlen(tails[t]), strlen(tail + strlen(tails[t])) + 1);
            tail = start;
        }
    }
}

/*
 * readers, show and metrics, text and JSON, with three processes of this test: one
 * that maps superseded version 3 and holds a descriptor on it (counted, with its uid
 * and descriptors), one that only holds a descriptor on it (pins it while mapping
 * nothing: issue 23), and, as root, one that maps a version.1 of its own in a tmpfs
 * mounted over the ring's path (listed apart as unverified, its bytes in no figure).
 */
START_TEST(test_readers_census_output)
{
    make_ring();
    const char *version = test_object_path(ring, "version.3");
    struct stat st;
    ck_assert_int_eq(stat(version, &st), 0);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t held = ((uint64_t)st.st_size + page - 1) / page * page;
    struct holder mapper = holder_start(version, true, true, NULL);
    struct holder opener = holder_start(version, false, true, NULL);
    struct holder squatter = {.pid = 0};
    bool as_root = geteuid() == 0;
    if (as_root)
        squatter = holder_start(test_object_path(ring, "version.1"), true, false,
                                test_ring_path(ring));
    EXPECT(0, test_fmt("added node-c (id 2) to ring '%s': generation 4\n", ring), "",
           "-r", ring, "add", "node-c", "10.0.0.3:11211");
    const pid_t pids[] = {mapper.pid, opener.pid, squatter.pid};
    char held_text[32];
    snprintf(held_text, sizeof(held_text), "%.1f KiB", (double)held / 1024.0);
    /* The holders' command, this program's name as the kernel keeps it (15 bytes). */
    char command[16];
    snprintf(command, sizeof(command), "%s", program_invocation_short_name);

    struct test_run r;
    RUN(&r, "-r", ring, "readers");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    census_only_mine(r.out, pids, COUNT_OF(pids));
    const char *rows = test_fmt("%-8ld  %-16s  %-6lu  %-10d  %-10s  %-10s  %d\n"
                                "%-8ld  %-16s  %-6lu  %-10d  %-10s  %-10s  %d\n",
                                (long)(mapper.pid < opener.pid ? mapper.pid : opener.pid),
                                command, (unsigned long)geteuid(), 3, "superseded",
                                mapper.pid < opener.pid ? held_text : "0 B", 1,
                                (long)(mapper.pid < opener.pid ? opener.pid : mapper.pid),
                                command, (unsigned long)geteuid(), 3, "superseded",
                                mapper.pid < opener.pid ? "0 B" : held_text, 1);
    const char *apart =
        as_root
            ? test_fmt("\nNot counted (not provably this ring's, or too large to "
                       "inspect):\n%-8ld  %-16s  %-6d  unverified: generation 1, 4.0 KiB "
                       "mapped, 0 descriptors\n",
                       (long)squatter.pid, command, 0)
            : "";
    ck_assert_str_eq(
        r.out, test_fmt("ring '%s', generation 4: 2 processes map it; 1 superseded "
                        "version held (%s)\n\n"
                        "PID       COMMAND           UID     GENERATION  VERSION     "
                        "MAPPED      DESCRIPTORS\n%s%s",
                        ring, held_text, rows, apart));
    test_run_free(&r);

    RUN(&r, "-r", ring, "show");
    ck_assert_int_eq(r.status, 0);
    census_only_mine(r.out, pids, COUNT_OF(pids));
    ck_assert_ptr_nonnull(strstr(
        r.out,
        test_fmt(
            "\nreaders:       2 processes, 2 on superseded versions (1 held, %s)%s\n",
            held_text, as_root ? "; 1 unverified process not counted" : "")));
    test_run_free(&r);

    RUN(&r, "-r", ring, "metrics");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(
        r.out,
        test_fmt(
            "# HELP shmring_ring_uncounted_processes Processes left out of the "
            "reader counts: holding objects named like the ring's versions that "
            "are not provably the ring's, or too large to inspect.\n"
            "# TYPE shmring_ring_uncounted_processes gauge\n"
            "shmring_ring_uncounted_processes{ring=\"%s\",reason=\"unverified\"} "
            "%d\nshmring_ring_uncounted_processes{ring=\"%s\",reason=\"too_large\"} ",
            ring, as_root, ring)));
    ck_assert_ptr_nonnull(
        strstr(r.out, test_fmt("shmring_ring_superseded_bytes{ring=\"%s\"} %" PRIu64 "\n",
                               ring, held)));
    ck_assert_ptr_nonnull(strstr(
        r.out, test_fmt("shmring_ring_reader_processes{ring=\"%s\",generation=\"3\","
                        "current=\"false\"} 2\n",
                        ring)));
    test_run_free(&r);

    json_t *j = JSON_OF("--json", "-r", ring, "readers");
    assert_keys(j, READERS_KEYS);
    json_t *readers = json_object_get(j, "readers");
    ck_assert_uint_eq(json_array_size(readers), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *reader = json_array_get(readers, i);
        assert_keys(reader, READER_KEYS);
        bool maps = json_integer_value(json_object_get(reader, "pid")) == mapper.pid;
        ck_assert_int_eq(json_integer_value(json_object_get(reader, "mapped_bytes")),
                         maps ? (json_int_t)held : 0);
        ck_assert_int_eq(json_integer_value(json_object_get(reader, "descriptors")), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(reader, "uid")), geteuid());
    }
    json_t *uncounted = json_object_get(j, "uncounted");
    size_t mine = 0;
    for (size_t i = 0; i < json_array_size(uncounted); i++) {
        json_t *entry = json_array_get(uncounted, i);
        assert_keys(entry, UNCOUNTED_KEYS);
        if (json_integer_value(json_object_get(entry, "pid")) != squatter.pid)
            continue;
        mine++;
        ck_assert_str_eq(json_string_value(json_object_get(entry, "reason")),
                         "unverified");
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "generation")), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "mapped_bytes")),
                         (json_int_t)page);
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "descriptors")), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "uid")), 0);
    }
    ck_assert_uint_eq(mine, as_root);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "superseded_bytes")),
                     (json_int_t)held);
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "show");
    json_t *line = json_object_get(j, "readers");
    ck_assert_int_eq(json_integer_value(json_object_get(line, "processes_unverified")),
                     as_root);
    ck_assert(json_is_integer(json_object_get(line, "processes_too_large")));
    json_decref(j);

    /* Last started first: a holder keeps the pipes of those started before it. */
    if (as_root)
        holder_stop(&squatter);
    holder_stop(&opener);
    holder_stop(&mapper);
}
END_TEST

static Suite *ringctl_ops_suite(void)
{
    Suite *suite = suite_create("ringctl_ops");

    TEST_CASE_WITH(suite, "core", &ringctl_fixture, test_version_and_help, test_import,
                   test_json_key_sets, test_command_help);
    TEST_CASE_WITH(suite, "readers", &ringctl_fixture, test_readers_map_read_only,
                   test_readers_census_output);
    return suite;
}

int main(void)
{
    /* A broken pipe to a ringctl that exited is reported by write(), not fatal. */
    signal(SIGPIPE, SIG_IGN);
    return test_run_suite(ringctl_ops_suite());
}
