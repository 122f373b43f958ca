/* Acting as another user. */
#include "test_support.h"

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

bool test_become(uid_t uid, gid_t gid)
{
    return setgroups(0, NULL) == 0 && setgid(gid) == 0 && setuid(uid) == 0;
}

int test_as_user(uid_t uid, gid_t gid, int (*fn)(void))
{
    int result_pipe[2];
    ck_assert_int_eq(pipe(result_pipe), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(result_pipe[0]);
        if (!test_become(uid, gid))
            _exit(100);
        int result = fn();
        _exit(write(result_pipe[1], &result, sizeof(result)) == sizeof(result) ? 0 : 101);
    }
    close(result_pipe[1]);
    int result = 1;
    ck_assert_int_eq(read(result_pipe[0], &result, sizeof(result)), sizeof(result));
    close(result_pipe[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    return result;
}
