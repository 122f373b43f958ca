/*
 * Base64 (RFC 4648 section 4: the standard alphabet, padded with '='): how etcd's
 * JSON gateway carries keys and values, and how ringctl's JSON gives a key that is
 * not UTF-8. One codec for both, strict on input: a decoder that let through stray
 * characters or a misplaced pad would give two texts one meaning.
 */
#include <stdint.h>
#include <stdlib.h>

#include "shmring_ctl.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int shmring_base64_encode(const void *data, size_t len, char **out)
{
    const unsigned char *in = data;
    if (len > (SIZE_MAX - 1) / 4 * 3 - 2)
        return SHMRING_ENOMEM;
    char *text = malloc((len + 2) / 3 * 4 + 1);
    if (text == NULL)
        return SHMRING_ENOMEM;
    size_t used = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t group = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            group |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len)
            group |= in[i + 2];
        text[used++] = alphabet[group >> 18];
        text[used++] = alphabet[(group >> 12) & 63];
        text[used++] = i + 1 < len ? alphabet[(group >> 6) & 63] : '=';
        text[used++] = i + 2 < len ? alphabet[group & 63] : '=';
    }
    text[used] = '\0';
    *out = text;
    return 0;
}

/* The value of one base64 digit, or -1 for any other byte ('=' included). */
static int digit_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int shmring_base64_decode(const char *text, size_t len, char **out, size_t *out_len)
{
    if (len % 4 != 0)
        return SHMRING_EINVAL;
    char *bytes = malloc(len / 4 * 3 + 1);
    if (bytes == NULL)
        return SHMRING_ENOMEM;
    size_t used = 0;
    for (size_t i = 0; i < len; i += 4) {
        uint32_t group = 0;
        int padding = 0;
        for (int j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)text[i + j];
            int value = digit_value(c);
            /* Padding only in the last group's last two places, and nothing after. */
            if (c == '=' && i + 4 == len && j >= 2) {
                padding++;
                value = 0;
            } else if (value < 0 || padding > 0) {
                free(bytes);
                return SHMRING_EINVAL;
            }
            group = group << 6 | (uint32_t)value;
        }
        /* The bits a pad leaves over must be zero (RFC 4648 section 3.5), so that
         * each byte string has exactly one encoding. */
        if ((padding == 1 && (group & 0xff) != 0) ||
            (padding == 2 && (group & 0xffff) != 0)) {
            free(bytes);
            return SHMRING_EINVAL;
        }
        bytes[used++] = (char)(group >> 16);
        if (padding < 2)
            bytes[used++] = (char)(group >> 8);
        if (padding < 1)
            bytes[used++] = (char)group;
    }
    bytes[used] = '\0';
    *out = bytes;
    *out_len = used;
    return 0;
}
