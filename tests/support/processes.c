/* Starting ringctl (or another program) with its standard streams on pipes, and
 * capturing what it writes. */
#include "test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TEST_RINGCTL_PATH
#error "tests/CMakeLists.txt names the ringctl binary under test"
#endif

const char *const TEST_RINGCTL = TEST_RINGCTL_PATH;

struct test_piped_child test_fork_piped(void)
{
    int commands[2], answers[2];
    ck_assert_int_eq(pipe2(commands, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(answers, O_CLOEXEC), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(commands[1]);
        close(answers[0]);
        return (struct test_piped_child){0, commands[0], answers[1]};
    }
    close(commands[0]);
    close(answers[1]);
    return (struct test_piped_child){pid, commands[1], answers[0]};
}

const struct test_spawn test_spawn_default = {.user = (uid_t)-1, .closed_fd = -1};

bool test_drain(int fd, char **text, size_t *len)
{
    char chunk[4096];
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
        return true;
    ck_assert_int_ge(n, 0);
    if (n == 0)
        return false;
    *text = realloc(*text, *len + (size_t)n + 1);
    ck_assert_ptr_nonnull(*text);
    memcpy(*text + *len, chunk, (size_t)n);
    *len += (size_t)n;
    (*text)[*len] = '\0';
    return true;
}

/* In the child: sets up what HOW asks for and executes PROGRAM; never returns. Exit
 * statuses 125 (setting up), 126 (changing user) and 127 (exec) say what failed. */
static void child_exec(const char *program, char *const *argv, int pipes[3][2],
                       const struct test_spawn *how)
{
    /* The child's end of each pipe: the read end for stdin, else the write end. */
    for (int fd = 0; fd < 3; fd++) {
        int end = pipes[fd][fd == 0 ? 0 : 1];
        if (end >= 0 && dup2(end, fd) < 0)
            _exit(125);
    }
    if (how->stdout_path != NULL) {
        int file = open(how->stdout_path, O_WRONLY | O_CLOEXEC);
        if (file < 0 || dup2(file, STDOUT_FILENO) < 0)
            _exit(125);
    }
    if (how->stdin_path != NULL) {
        int file = open(how->stdin_path, O_RDONLY | O_CLOEXEC);
        if (file < 0 || dup2(file, STDIN_FILENO) < 0)
            _exit(125);
    }
    if (how->closed_fd >= 0)
        close(how->closed_fd);
    struct rlimit limit = {how->address_space, how->address_space};
    if (how->address_space != 0 && setrlimit(RLIMIT_AS, &limit) != 0)
        _exit(125);
    struct rlimit file_limit = {how->file_size, how->file_size};
    if (how->file_size != 0 && setrlimit(RLIMIT_FSIZE, &file_limit) != 0)
        _exit(125);
    if (how->user != (uid_t)-1 && !test_become(how->user, (gid_t)how->user))
        _exit(126);
    /* An alarm outlives execve(). */
    alarm(how->alarm_seconds);
    execv(program, argv);
    _exit(127);
}

struct test_child test_child_start_with(const char *const *args,
                                        const struct test_spawn *how)
{
    int pipes[3][2];
    for (int fd = 0; fd < 3; fd++) {
        pipes[fd][0] = pipes[fd][1] = -1;
        bool captured = fd != how->closed_fd && !(fd == 1 && how->stdout_path != NULL) &&
                        !(fd == 0 && how->stdin_path != NULL);
        if (captured)
            ck_assert_int_eq(pipe2(pipes[fd], O_CLOEXEC), 0);
    }
    size_t count = 0;
    while (args[count] != NULL)
        count++;
    const char **argv = calloc(count + 2, sizeof(*argv));
    ck_assert_ptr_nonnull(argv);
    const char *program = how->program != NULL ? how->program : TEST_RINGCTL;
    argv[0] = program;
    memcpy(argv + 1, args, count * sizeof(*argv));

    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        child_exec(program, (char *const *)argv, pipes, how);
    free(argv);
    struct test_child c = {
        .pid = pid, .in = pipes[0][1], .out = pipes[1][0], .err = pipes[2][0]};
    for (int fd = 0; fd < 3; fd++)
        if (pipes[fd][fd == 0 ? 0 : 1] >= 0)
            close(pipes[fd][fd == 0 ? 0 : 1]);
    return c;
}

struct test_child test_child_start(const char *const *args, uid_t user)
{
    struct test_spawn how = test_spawn_default;
    how.user = user;
    return test_child_start_with(args, &how);
}

int test_child_wait(struct test_child *c)
{
    int status;
    while (waitpid(c->pid, &status, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    ck_assert_msg(WIFEXITED(status), "ringctl was killed by signal %d", WTERMSIG(status));
    ck_assert_msg(WEXITSTATUS(status) < 125, "ringctl could not be started (%d)",
                  WEXITSTATUS(status));
    return WEXITSTATUS(status);
}

void test_run_with(struct test_run *r, const struct test_spawn *how, const char *input,
                   const char *const *args)
{
    struct test_child c = test_child_start_with(args, how);
    size_t input_len = input != NULL ? strlen(input) : 0, written = 0;
    size_t out_len = 0, err_len = 0;
    r->out = calloc(1, 1);
    r->err = calloc(1, 1);
    bool out_open = c.out >= 0, err_open = c.err >= 0;
    if (input_len == 0 && c.in >= 0) {
        close(c.in);
        c.in = -1;
    }
    /* Writes and reads interleaved, so that neither side blocks on a full pipe. */
    while (out_open || err_open) {
        struct pollfd fds[3] = {{.fd = out_open ? c.out : -1, .events = POLLIN},
                                {.fd = err_open ? c.err : -1, .events = POLLIN},
                                {.fd = c.in, .events = POLLOUT}};
        int ready = poll(fds, 3, -1);
        if (ready < 0 && errno == EINTR)
            continue;
        ck_assert_int_gt(ready, 0);
        if (fds[0].revents != 0)
            out_open = test_drain(c.out, &r->out, &out_len);
        if (fds[1].revents != 0)
            err_open = test_drain(c.err, &r->err, &err_len);
        if (c.in >= 0 && fds[2].revents != 0) {
            ssize_t n = write(c.in, input + written, input_len - written);
            if (n > 0)
                written += (size_t)n;
            if (n < 0 || written == input_len) {
                close(c.in); /* EPIPE: the child stopped reading; it says why */
                c.in = -1;
            }
        }
    }
    if (c.in >= 0)
        close(c.in);
    if (c.out >= 0)
        close(c.out);
    if (c.err >= 0)
        close(c.err);
    r->status = test_child_wait(&c);
}

void test_run_as(struct test_run *r, uid_t user, const char *input,
                 const char *const *args)
{
    struct test_spawn how = test_spawn_default;
    how.user = user;
    test_run_with(r, &how, input, args);
}

void test_run_free(struct test_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
