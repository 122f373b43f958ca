/*
 * Node names and addresses: printable UTF-8, no C0 or C1 control characters and no
 * DEL. They end up in JSON (which must be UTF-8) and in ringctl's line-oriented
 * output (which control characters would corrupt), so both the node-set API and the
 * snapshot validator hold them to this; and the one order of names that placement
 * and the matching of nodes between snapshots follow.
 */
#include <string.h>

#include "text_internal.h"

size_t shmring__utf8_sequence(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (n > len)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

bool shmring__text_valid(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        if (s[i] < 0x20 || s[i] == 0x7f)
            return false;
        size_t n = shmring__utf8_sequence(s + i, len - i);
        if (n == 0)
            return false;
        /* The C1 controls, U+0080-U+009F (0xc2 0x80-0x9f), corrupt a terminal's
         * output as the C0 ones do (U+009B is CSI). */
        if (n == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0)
            return false;
        i += n;
    }
    return true;
}

int shmring__text_compare(const char *a, size_t a_len, const char *b, size_t b_len)
{
    int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
    if (c != 0)
        return c;
    return (a_len > b_len) - (a_len < b_len);
}
