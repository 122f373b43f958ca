/* Tests of the libketama server file reader (lib/import_libketama.c). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBKETAMA SHMRING_IMPORT_LIBKETAMA

/* The shape of libketama's own ketama.servers: tabs, a comment, an empty line. */
static const char server_file[] = "# server\tmemory\n"
                                  "10.0.1.1:11211\t600\n"
                                  "\n"
                                  "10.0.1.2:11211 300  \r\n"
                                  "10.0.1.3:11211\t200";

START_TEST(test_server_file)
{
    test_check_import(
        LIBKETAMA, server_file, NULL,
        &TEST_JSON_TEXT("libketama", "md5", 160, TEST_JSON_NO_TABLE_SIZE,
                        {"10.0.1.1:11211", 0, "10.0.1.1:11211", NULL, 600, "up"},
                        {"10.0.1.2:11211", 1, "10.0.1.2:11211", NULL, 300, "up"},
                        {"10.0.1.3:11211", 2, "10.0.1.3:11211", NULL, 200, "up"}));
}
END_TEST

static const struct test_import_failure failures[] = {
    {"10.0.1.1:11211\n", NULL, 1, "expected 'ADDRESS MEMORY', not '10.0.1.1:11211'"},
    {"a 1\nb 2 c\n", NULL, 2, "expected 'ADDRESS MEMORY', not 'b 2 c'"},
    {"a 0\n", NULL, 1, "memory '0' must be an integer from 1 to 65535"},
    {"a 65536\n", NULL, 1, "memory '65536' must be an integer from 1 to 65535"},
    {"a -1\n", NULL, 1, "memory '-1' must be an integer from 1 to 65535"},
    {"a 1.5\n", NULL, 1, "memory '1.5' must be an integer from 1 to 65535"},
    {"# x\n192.168.100.100:112110 1\n", NULL, 2,
     "address '192.168.100.100:112110' is longer than the 21 bytes libketama keeps"},
    {"a 1\na 2\n", NULL, 2,
     "server 'a' is given twice: the peer would merge their points, a node set cannot "
     "hold both"},
    {"# only a comment\n\n", NULL, 0, "no servers"},
    {"a\x01 1\n", NULL, 1, "server 'a\\x01': a server must be 1-255 bytes of UTF-8 text"},
};

START_TEST(test_failure)
{
    const struct test_import_failure *f = &failures[_i];
    test_import_fails(LIBKETAMA, f->text, f->section, f->line, f->message);
}
END_TEST

START_TEST(test_long_line)
{
    char text[256];
    memset(text, ' ', sizeof(text));
    memcpy(text, "a 1", 3);
    memcpy(text + 200, "2", 1);
    text[sizeof(text) - 1] = '\0';
    test_import_fails(LIBKETAMA, text, NULL, 1,
                      "a line longer than 126 bytes, which libketama cuts");
}
END_TEST

START_TEST(test_no_section)
{
    test_import_fails(LIBKETAMA, server_file, "pool", 0,
                      "a libketama server file has no sections: nothing to choose");
}
END_TEST

static Suite *import_libketama_suite(void)
{
    Suite *suite = suite_create("import_libketama");
    TEST_CASE(suite, "core", test_server_file);
    TCase *errors = TEST_CASE(suite, "errors", test_long_line, test_no_section);
    tcase_add_loop_test(errors, test_failure, 0, sizeof(failures) / sizeof(failures[0]));
    return suite;
}

int main(void)
{
    return test_run_suite(import_libketama_suite());
}
