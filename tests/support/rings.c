/* A ring's paths and entries in the default ring directory, its mappings in this
 * process, and waiting for a reader to follow a publication. */
#include "support_internal.h"
#include "test_support.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "ring_dir_internal.h"

const char *test_ring_path(const char *ring)
{
    static char path[512];
    snprintf(path, sizeof(path), SHMRING_DEFAULT_DIRECTORY "/shmring.%s", ring);
    return path;
}

const char *test_object_path(const char *ring, const char *name)
{
    static char path[600];
    snprintf(path, sizeof(path), SHMRING_DEFAULT_DIRECTORY "/shmring.%s/%s", ring, name);
    return path;
}

const char *test_version_path(const char *ring, uint64_t generation)
{
    char name[FILE_NAME_MAX];
    shmring__version_file(generation, name);
    return test_object_path(ring, name);
}

bool test_entry_of(const char *name, const char *ring)
{
    static const char *const prefixes[] = {"shmring.", ".shmring-new.", ".shmring-gone."};
    for (size_t i = 0; i < COUNT_OF(prefixes); i++) {
        size_t prefix = strlen(prefixes[i]), len = strlen(ring);
        if (strncmp(name, prefixes[i], prefix) != 0 ||
            strncmp(name + prefix, ring, len) != 0)
            continue;
        char next = name[prefix + len];
        if (next == '.' || (next == '\0' && i == 0))
            return true;
    }
    return false;
}

int test_ring_entries(const char *ring)
{
    DIR *dir = opendir(SHMRING_DEFAULT_DIRECTORY);
    if (dir == NULL)
        return 0;
    int count = 0;
    const struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        count += test_entry_of(entry->d_name, ring);
    closedir(dir);
    return count;
}

int test_ring_files(const char *ring)
{
    return test_count_entries(test_ring_path(ring));
}

const char *test_ring_listing(const char *ring)
{
    return test_listing(test_ring_path(ring));
}

const char *test_ring_listing_in(const char *directory, const char *ring)
{
    return test__list(directory, test_entry_of, ring);
}

const char *test_hidden_path(const char *ring, const char *prefix)
{
    static char path[600];
    char start[300];
    int len = snprintf(start, sizeof(start), "%s%s.", prefix, ring);
    DIR *dir = opendir(SHMRING_DEFAULT_DIRECTORY);
    ck_assert_ptr_nonnull(dir);
    int found = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, start, (size_t)len) != 0)
            continue;
        found++;
        snprintf(path, sizeof(path), SHMRING_DEFAULT_DIRECTORY "/%s", entry->d_name);
    }
    closedir(dir);
    ck_assert_msg(found <= 1, "%d entries start with %s", found, start);
    return found == 1 ? path : NULL;
}

int test_ring_mappings(const char *ring)
{
    char needle[600];
    snprintf(needle, sizeof(needle), "%s/", test_ring_path(ring));
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL)
        return -1;
    char line[1024];
    int count = 0;
    while (fgets(line, sizeof(line), maps) != NULL)
        count += strstr(line, needle) != NULL;
    fclose(maps);
    return count;
}

void test_wait_for_generation(shmring_t *r, uint64_t generation)
{
    for (int i = 0; i < 1000 && shmring_generation(r) != generation; i++)
        test_sleep_ms(10);
    ck_assert_uint_eq(shmring_generation(r), generation);
}
