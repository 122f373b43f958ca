/* Base64 (RFC 4648, standard alphabet, padded): etcd's JSON gateway carries keys and
 * values as base64 strings, since they are bytes. */
#include <stdlib.h>
#include <string.h>

#include "sync_internal.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *sync__base64_encode(const void *data, size_t len)
{
    const unsigned char *in = data;
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (out == NULL)
        return NULL;
    size_t used = 0;
    for (size_t i = 0; i < len; i += 3) {
        unsigned group = (unsigned)in[i] << 16;
        if (i + 1 < len)
            group |= (unsigned)in[i + 1] << 8;
        if (i + 2 < len)
            group |= in[i + 2];
        out[used++] = alphabet[(group >> 18) & 63];
        out[used++] = alphabet[(group >> 12) & 63];
        out[used++] = i + 1 < len ? alphabet[(group >> 6) & 63] : '=';
        out[used++] = i + 2 < len ? alphabet[group & 63] : '=';
    }
    out[used] = '\0';
    return out;
}

static int digit_value(char c)
{
    const char *p = c != '\0' ? strchr(alphabet, c) : NULL;
    return p != NULL ? (int)(p - alphabet) : -1;
}

bool sync__base64_decode(const char *text, char **out, size_t *out_len)
{
    size_t len = strlen(text);
    if (len % 4 != 0)
        return false;
    char *bytes = malloc(len / 4 * 3 + 1);
    if (bytes == NULL)
        return false;
    size_t used = 0;
    for (size_t i = 0; i < len; i += 4) {
        int d[4];
        int padding = 0;
        for (int j = 0; j < 4; j++) {
            /* Padding only at the very end, at most two characters of it. */
            if (text[i + j] == '=' && i + 4 == len && j >= 2) {
                d[j] = 0;
                padding++;
            } else if (padding > 0 || (d[j] = digit_value(text[i + j])) < 0) {
                free(bytes);
                return false;
            }
        }
        unsigned group = (unsigned)d[0] << 18 | (unsigned)d[1] << 12 |
                         (unsigned)d[2] << 6 | (unsigned)d[3];
        bytes[used++] = (char)(group >> 16);
        if (padding < 2)
            bytes[used++] = (char)(group >> 8);
        if (padding < 1)
            bytes[used++] = (char)group;
    }
    bytes[used] = '\0';
    *out = bytes;
    *out_len = used;
    return true;
}
