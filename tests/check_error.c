/*
 * Tests of lib/error.c: the error list's texts and names, and the library version.
 *
 * The codes come from SHMRING_ERRNO_MAP, the one list the library generates its enum
 * and its texts from; the expected values (the errno codes are the negated errno
 * values, the library's own codes run from -1000 without a gap) are written here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "test_support.h"

struct code {
    const char *name;
    int value;
    const char *text;
};

static const struct code codes[] = {
#define CODE_ENTRY(name, value, text) {#name, SHMRING_##name, text},
    SHMRING_ERRNO_MAP(CODE_ENTRY)
#undef CODE_ENTRY
};

#define CODE_COUNT (sizeof(codes) / sizeof(codes[0]))

/* Whether TEXT is the text of one of the listed codes. */
static bool is_listed_text(const char *text)
{
    for (size_t i = 0; i < CODE_COUNT; i++)
        if (strcmp(text, codes[i].text) == 0)
            return true;
    return false;
}

START_TEST(every_code_has_its_own_text)
{
    for (size_t i = 0; i < CODE_COUNT; i++) {
        const char *text = shmring_strerror(codes[i].value);
        ck_assert_msg(text != NULL, "%s has no text", codes[i].name);
        ck_assert_msg(strlen(text) > 0, "%s has an empty text", codes[i].name);
        ck_assert_str_eq(text, codes[i].text);
        ck_assert_str_ne(text, "success");
        ck_assert_str_ne(text, "unknown shmring error");
        for (size_t j = 0; j < i; j++) {
            ck_assert_msg(codes[i].value != codes[j].value, "%s and %s share %d",
                          codes[i].name, codes[j].name, codes[i].value);
            ck_assert_msg(strcmp(text, shmring_strerror(codes[j].value)) != 0,
                          "%s and %s share the text '%s'", codes[i].name, codes[j].name,
                          text);
        }
    }
    ck_assert_uint_eq(CODE_COUNT, 55);
}
END_TEST

START_TEST(system_codes_are_negated_errno)
{
    ck_assert_int_eq(SHMRING_ENOENT, -ENOENT);
    ck_assert_int_eq(SHMRING_EACCES, -EACCES);
    ck_assert_int_eq(SHMRING_EPERM, -EPERM);
    ck_assert_int_eq(SHMRING_ENOMEM, -ENOMEM);
    ck_assert_int_eq(SHMRING_ENOSPC, -ENOSPC);
    ck_assert_int_eq(SHMRING_EEXIST, -EEXIST);
    ck_assert_int_eq(SHMRING_EINVAL, -EINVAL);
    ck_assert_int_eq(SHMRING_EMFILE, -EMFILE);
    ck_assert_int_eq(SHMRING_EIO, -EIO);
}
END_TEST

START_TEST(library_codes_start_at_minus_1000_without_a_gap)
{
    ck_assert_int_eq(SHMRING_EEMPTY, -1000);
    ck_assert_int_eq(SHMRING_ECHECKSUM, -1012);
    ck_assert_int_eq(SHMRING_EOWNER, -1013);
    ck_assert_int_eq(SHMRING_EBADRING, -1020);
    ck_assert_int_eq(SHMRING_EBASEDIR, -1029);
    ck_assert_int_eq(SHMRING_EINUSE, -1030);
    ck_assert_int_eq(SHMRING_EBADDIR, -1031);
    ck_assert_int_eq(SHMRING_ENODIR, -1032);
    ck_assert_int_eq(SHMRING_ENOTRINGDIR, -1033);
    ck_assert_int_eq(SHMRING_EBASEOWNER, -1034);
    ck_assert_int_eq(SHMRING_EUNWEIGHTED, -1035);
    ck_assert_int_eq(SHMRING_EJUMPDOWN, -1036);
    ck_assert_int_eq(SHMRING_ERENUMBER, -1037);
    /* A version newer than the reader (docs/upgrading.md). */
    ck_assert_int_eq(SHMRING_EFEATURE, -1038);
    ck_assert_int_eq(SHMRING_ENEWFORMAT, -1039);
    ck_assert_int_eq(SHMRING_ENODOWN, -1040);
    ck_assert_int_eq(SHMRING_EUNRESOLVED, -1041);
    /* Bounded loads' codes (-1042 to -1045). */
    ck_assert_int_eq(SHMRING_ELEASE, -1042);
    ck_assert_int_eq(SHMRING_ENOBOARD, -1043);
    ck_assert_int_eq(SHMRING_EBOARD, -1044);
    ck_assert_int_eq(SHMRING_EBADFACTOR, -1045);
    /* Every value from -1000 to -1045 is exactly one listed code. */
    for (int value = -1000; value >= -1045; value--) {
        int found = 0;
        for (size_t i = 0; i < CODE_COUNT; i++)
            found += codes[i].value == value;
        ck_assert_msg(found == 1, "%d is listed %d times", value, found);
    }
}
END_TEST

/* The names as shmring.h spells its codes, in the list's order, written out here. */
static const char *const expected_names[] = {
    "SHMRING_ENOENT",        "SHMRING_EACCES",     "SHMRING_EPERM",
    "SHMRING_ENOMEM",        "SHMRING_ENOSPC",     "SHMRING_EEXIST",
    "SHMRING_EINVAL",        "SHMRING_EMFILE",     "SHMRING_EIO",
    "SHMRING_EEMPTY",        "SHMRING_EALLDOWN",   "SHMRING_EBADMAGIC",
    "SHMRING_EFORMAT",       "SHMRING_EBYTEORDER", "SHMRING_ETRUNCATED",
    "SHMRING_EBADSECTION",   "SHMRING_EBADPARAMS", "SHMRING_EBADNODE",
    "SHMRING_EBADSTRING",    "SHMRING_EBADPOINTS", "SHMRING_EBADINDEX",
    "SHMRING_ECHECKSUM",     "SHMRING_EOWNER",     "SHMRING_ELIMIT",
    "SHMRING_ENODE",         "SHMRING_EDUPLICATE", "SHMRING_EBADNAME",
    "SHMRING_EBADADDRESS",   "SHMRING_EBADWEIGHT", "SHMRING_EBADRING",
    "SHMRING_EBADALGORITHM", "SHMRING_EBADHASH",   "SHMRING_EBADVNODES",
    "SHMRING_EJSON",         "SHMRING_ECONTROL",   "SHMRING_ESTALE",
    "SHMRING_ENOTRING",      "SHMRING_EBUSY",      "SHMRING_EBASEDIR",
    "SHMRING_EINUSE",        "SHMRING_EBADDIR",    "SHMRING_ENODIR",
    "SHMRING_ENOTRINGDIR",   "SHMRING_EBASEOWNER", "SHMRING_EUNWEIGHTED",
    "SHMRING_EJUMPDOWN",     "SHMRING_ERENUMBER",  "SHMRING_EFEATURE",
    "SHMRING_ENEWFORMAT",    "SHMRING_ENODOWN",    "SHMRING_EUNRESOLVED",
    "SHMRING_ELEASE",        "SHMRING_ENOBOARD",   "SHMRING_EBOARD",
    "SHMRING_EBADFACTOR",
};

START_TEST(every_code_has_its_name)
{
    ck_assert_uint_eq(sizeof(expected_names) / sizeof(expected_names[0]), CODE_COUNT);
    for (size_t i = 0; i < CODE_COUNT; i++) {
        const char *name = shmring_err_name(codes[i].value);
        ck_assert_str_eq(name, expected_names[i]);
        /* The macro's own spelling, "SHMRING_" and the list's name. */
        ck_assert_str_eq(name + strlen("SHMRING_"), codes[i].name);
        /* Static: the same pointer every time. */
        ck_assert_ptr_eq(shmring_err_name(codes[i].value), name);
    }
    ck_assert_str_eq(shmring_err_name(SHMRING_ENOENT), "SHMRING_ENOENT");
    ck_assert_str_eq(shmring_err_name(-ENOENT), "SHMRING_ENOENT");
    ck_assert_str_eq(shmring_err_name(-1000), "SHMRING_EEMPTY");
    ck_assert_str_eq(shmring_err_name(-1030), "SHMRING_EINUSE");
    ck_assert_str_eq(shmring_err_name(-1034), "SHMRING_EBASEOWNER");
}
END_TEST

START_TEST(other_values_have_no_name)
{
    /* Zero, positive numbers, errno values outside the list (-EBUSY is not
     * SHMRING_EBUSY), unused library codes and values far away. */
    static const int others[] = {0,     1,     ENOENT, -EAGAIN, -EBUSY, -999,
                                 -1046, -4096, 1000,   INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        ck_assert_str_eq(shmring_err_name(others[i]), "unknown");
}
END_TEST

START_TEST(zero_is_success)
{
    ck_assert_str_eq(shmring_strerror(0), "success");
}
END_TEST

START_TEST(positive_numbers_are_unknown)
{
    static const int positives[] = {1, ENOENT, EINVAL, 1000, 1029, 4096, INT_MAX};
    for (size_t i = 0; i < sizeof(positives) / sizeof(positives[0]); i++)
        ck_assert_str_eq(shmring_strerror(positives[i]), "unknown shmring error");
}
END_TEST

START_TEST(unlisted_errno_values_get_the_system_text)
{
    /* Negated errno values outside the list are described as the C library does. */
    ck_assert_str_eq(shmring_strerror(-EAGAIN), strerror(EAGAIN));
    ck_assert_str_eq(shmring_strerror(-ENOTDIR), "Not a directory");
    ck_assert_str_eq(shmring_strerror(-ELOOP), "Too many levels of symbolic links");
    /* SHMRING_EBUSY is the library's -1028, not -EBUSY. */
    ck_assert_int_ne(SHMRING_EBUSY, -EBUSY);
    ck_assert_str_eq(shmring_strerror(-EBUSY), "Device or resource busy");
}
END_TEST

START_TEST(unknown_negative_codes)
{
    /* Beyond the errno range: never NULL, never a listed text. */
    static const int far[] = {-4096, -5000, -100000, INT_MIN};
    for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++)
        ck_assert_str_eq(shmring_strerror(far[i]), "unknown shmring error");
    /* Unused library codes (from -1000 down, where no errno value lies) get the same
     * static text: a second call cannot overwrite the first one's. */
    static const int unused[] = {-1046, -1047, -4095};
    for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++)
        ck_assert_str_eq(shmring_strerror(unused[i]), "unknown shmring error");
    const char *first = shmring_strerror(-1046);
    ck_assert_ptr_eq(shmring_strerror(-1047), first);
    /* An unused errno value gets the C library's text, neither NULL nor listed. */
    const char *text = shmring_strerror(-999);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_gt(strlen(text), 0);
    ck_assert_msg(!is_listed_text(text), "-999 reads as a listed code: '%s'", text);
}
END_TEST

START_TEST(version_string_matches_the_macros_and_the_build)
{
    char expected[64];
    snprintf(expected, sizeof(expected), "%d.%d.%d", SHMRING_VERSION_MAJOR,
             SHMRING_VERSION_MINOR, SHMRING_VERSION_PATCH);
    ck_assert_ptr_nonnull(shmring_version());
    ck_assert_str_eq(shmring_version(), SHMRING_VERSION_STRING);
    ck_assert_str_eq(shmring_version(), expected);
    /* The project's version in CMake, passed in by tests/CMakeLists.txt. */
    ck_assert_str_eq(shmring_version(), SHMRING_BUILD_VERSION);
    ck_assert_int_ge(SHMRING_VERSION_MAJOR, 0);
    ck_assert_int_ge(SHMRING_VERSION_MINOR, 0);
    ck_assert_int_ge(SHMRING_VERSION_PATCH, 0);
}
END_TEST

static Suite *error_suite(void)
{
    Suite *s = suite_create("error");
    TEST_CASE(s, "codes", every_code_has_its_own_text, system_codes_are_negated_errno,
              library_codes_start_at_minus_1000_without_a_gap, every_code_has_its_name);
    TEST_CASE(s, "unlisted", zero_is_success, positive_numbers_are_unknown,
              unlisted_errno_values_get_the_system_text, unknown_negative_codes,
              other_values_have_no_name);
    TEST_CASE(s, "version", version_string_matches_the_macros_and_the_build);
    return s;
}

int main(void)
{
    return test_run_suite(error_suite());
}
