/* Language codes (ISO 639); the rules are in lang.h. */
#include "text/lang.h"

#include <string.h>

static bool lower_letters(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < 'a' || s[i] > 'z')
            return false;
    return s[n] == '\0';
}

static const Iso639One *find_two(const char *s)
{
    size_t lo = 0, hi = iso639_1_n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(iso639_1[mid].a2, s);
        if (c == 0)
            return &iso639_1[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static bool find_three(const char *s)
{
    size_t lo = 0, hi = iso639_3_n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = memcmp(iso639_3 + 3 * mid, s, 3);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

int lang_parse(const char *s, Lang *out)
{
    if (lower_letters(s, 2)) {
        if (!find_two(s))
            return -1;
        memcpy(out->code, s, 3);
        return 0;
    }
    if (!lower_letters(s, 3))
        return -1;
    for (size_t i = 0; i < iso639_1_n; i++)
        if (strcmp(iso639_1[i].a3, s) == 0 || strcmp(iso639_1[i].b, s) == 0) {
            memcpy(out->code, iso639_1[i].a2, 3);
            return 0;
        }
    if (!find_three(s))
        return -1;
    memcpy(out->code, s, 4);
    return 0;
}

bool lang_eq(Lang a, Lang b) { return strcmp(a.code, b.code) == 0; }

const char *lang_label(const Lang *l)
{
    const Iso639One *o = l->code[2] == '\0' ? find_two(l->code) : NULL;
    return o ? o->name : l->code;
}
