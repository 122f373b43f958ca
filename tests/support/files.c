/* Private directories, listings, and the files, directories and sockets tests make. */
#include "support_internal.h"
#include "test_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Removes DIRECTORY's entry NAME and, if it is a directory, what it holds (a ring's
 * directory holds files, unless a test planted something else). */
static void remove_entry(int directory, const char *name)
{
    int fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        DIR *dir = fdopendir(fd);
        struct dirent *entry;
        while (dir != NULL && (entry = readdir(dir)) != NULL)
            if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
                remove_entry(fd, entry->d_name);
        if (dir != NULL)
            closedir(dir);
        else
            close(fd);
        unlinkat(directory, name, AT_REMOVEDIR);
    } else {
        unlinkat(directory, name, 0);
    }
}

void test_remove_tree(const char *path)
{
    remove_entry(AT_FDCWD, path);
}

void test_private_directory(const char *tag, char path[TEST_PATH_MAX])
{
    int n =
        snprintf(path, TEST_PATH_MAX, "/tmp/%s%s.XXXXXX", test__private_prefix(), tag);
    ck_assert(n > 0 && n < TEST_PATH_MAX);
    ck_assert_ptr_nonnull(mkdtemp(path));
    ck_assert_int_eq(chmod(path, 0755), 0);
}

const char *test__list(const char *directory, bool (*keep)(const char *, const char *),
                       const char *ring)
{
    static char listing[8192];
    listing[0] = '\0';
    struct dirent **names;
    int count = scandir(directory, &names, NULL, alphasort);
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        const char *name = names[i]->d_name;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
            (keep == NULL || keep(name, ring))) {
            int n = snprintf(listing + used, sizeof(listing) - used, "%s%s",
                             used > 0 ? "," : "", name);
            ck_assert(n > 0 && (size_t)n < sizeof(listing) - used);
            used += (size_t)n;
        }
        free(names[i]);
    }
    if (count >= 0)
        free(names);
    return listing;
}

const char *test_listing(const char *directory)
{
    return test__list(directory, NULL, NULL);
}

int test_count_entries(const char *directory)
{
    DIR *dir = opendir(directory);
    if (dir == NULL)
        return 0;
    int count = 0;
    const struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        count += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
    closedir(dir);
    return count;
}

int test_try_make_file(const char *path, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    /* Past the umask. */
    int code = fchmod(fd, mode) != 0 ? -errno : 0;
    close(fd);
    return code;
}

int test_try_make_directory(const char *path, mode_t mode)
{
    return mkdir(path, 0700) != 0 || chmod(path, mode) != 0 ? -errno : 0;
}

int test_try_make_socket(const char *path)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if (len >= sizeof(address.sun_path))
        return -ENAMETOOLONG;
    memcpy(address.sun_path, path, len + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int code =
        bind(fd, (const struct sockaddr *)&address, sizeof(address)) != 0 ? -errno : 0;
    close(fd);
    return code;
}

void test_make_file(const char *path, mode_t mode)
{
    ck_assert_int_eq(test_try_make_file(path, mode), 0);
}

void test_make_directory(const char *path, mode_t mode)
{
    ck_assert_int_eq(test_try_make_directory(path, mode), 0);
}

void test_make_socket(const char *path)
{
    ck_assert_int_eq(test_try_make_socket(path), 0);
}

void test_write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    ck_assert_int_eq(fputs(text, file) >= 0, 1);
    ck_assert_int_eq(fclose(file), 0);
}
