/*
 * Fuzzes the readers of peers' configurations (lib/import*.c). The input's first
 * byte picks the format and whether a section is asked for (the name "a"); the rest
 * is the file. What imports must write JSON that reads back to the same JSON, and,
 * when small enough, build a snapshot that validates and answers lookups. What does
 * not import must fail with SHMRING_EINVAL (or SHMRING_ENOMEM) and a one-line
 * message whose line is within the file.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(int err, const shmring_import_error_t *error, const char *text,
                        size_t len)
{
    FUZZ_REQUIRE(err == SHMRING_EINVAL || err == SHMRING_ENOMEM,
                 "import returned %d (%s)", err, shmring_strerror(err));
    if (err == SHMRING_ENOMEM)
        return;
    fuzz_check_error_text(error->text, sizeof(error->text));
    int lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    FUZZ_REQUIRE(error->line >= 0 && error->line <= lines, "error line %d of %d",
                 error->line, lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    shmring_import_format_t format = (shmring_import_format_t)(data[0] % 4);
    const char *section = (data[0] & 4) != 0 ? "a" : NULL;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    shmring_nodeset_t *set = NULL;
    shmring_import_error_t error;
    int err = shmring_nodeset_import(format, text, len, section, &set, &error);
    if (err != 0) {
        FUZZ_REQUIRE(set == NULL, "a failed import filled *out");
        check_error(err, &error, text, len);
        return 0;
    }
    FUZZ_REQUIRE(shmring_nodeset_count(set) > 0, "an import without nodes");
    fuzz_check_json_round_trip(set);
    if (fuzz_build_cost(set) <= FUZZ_BUILD_COST_MAX) {
        void *buffer = NULL;
        size_t snapshot_size = 0;
        err = shmring_snapshot_build(set, &buffer, &snapshot_size);
        FUZZ_REQUIRE(err == 0, "build returned %d (%s)", err, shmring_strerror(err));
        shmring_snapshot_t *snapshot = fuzz_snapshot_new(buffer, snapshot_size, true);
        free(buffer);
        fuzz_check_snapshot(snapshot, data, size);
        shmring_snapshot_free(snapshot);
    }
    shmring_nodeset_free(set);
    return 0;
}
