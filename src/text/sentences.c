/* Sentence splitting by rules; see sentences.h. */
#include "text/sentences.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <utf8proc.h>

#include "base/err.h"

#define SENT_MAX_DEPTH 64

static const char *const abbrev_en[] = {
    "Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Jr", "Sr", "vs", "etc", "Mt", "Gen", "Capt", "Lt",
    "Col", "Sgt", "Rev", "Inc", "Ltd", "Co", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug",
    "Sep", "Sept", "Oct", "Nov", "Dec", NULL,
};
static const char *const abbrev_fr[] = {
    "M", "MM", "Mme", "Mmes", "Mlle", "Mlles", "Dr", "Pr", "Me", "Mgr", "St", "Ste", "etc", "cf",
    "av", "apr", NULL,
};
static const char *const abbrev_other[] = {"Dr", "St", "etc", NULL};
/* English abbreviations only before a number ("No. 5"; "No. Go away." splits). */
static const char *const abbrev_en_num[] = {"No", "Nos", NULL};

/* The scan of one line: the closing marks still expected, innermost last. */
typedef struct Scan {
    const char *s;
    size_t len;
    Lang lang;
    int32_t close[SENT_MAX_DEPTH];
    int depth;
    bool stuck; /* more quotes open than close[] holds: no further split */
} Scan;

/* The code point at s[*i], *i moved past it; an invalid byte is -1 (one byte). */
static int32_t next_cp(const char *s, size_t len, size_t *i)
{
    utf8proc_int32_t c;
    utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s + *i,
                                          (utf8proc_ssize_t)(len - *i), &c);
    if (n <= 0) {
        (*i)++;
        return -1;
    }
    *i += (size_t)n;
    return c;
}

static bool is_space(int32_t c)
{
    return c == '\t' || c == '\n' || c == '\r' ||
           (c >= 0 && utf8proc_category(c) == UTF8PROC_CATEGORY_ZS);
}

static bool is_mark(int32_t c)
{
    return c == '.' || c == '!' || c == '?' || c == 0x2026;
}

/* The mark that closes the opening quote or bracket c, else 0. */
static int32_t closer_of(int32_t c)
{
    switch (c) {
    case '(': return ')';
    case '[': return ']';
    case '{': return '}';
    case '"': return '"';
    case 0xAB: return 0xBB;       /* « » */
    case 0x2039: return 0x203A;   /* ‹ › */
    case 0x201C: return 0x201D;   /* “ ” */
    case 0x201E: return 0x201C;   /* „ “ */
    default: return 0;
    }
}

/* The depth that closing c leaves (the innermost open mark it closes), or -1. */
static int closes_to(const int32_t *close, int depth, int32_t c)
{
    for (int k = depth - 1; k >= 0; k--)
        if (close[k] == c)
            return k;
    return -1;
}

/* Opens or closes the quote or bracket c, if it is one. */
static void quote_step(Scan *sc, int32_t c)
{
    int k = closes_to(sc->close, sc->depth, c);
    if (k >= 0) {
        sc->depth = k;
        return;
    }
    int32_t cl = closer_of(c);
    if (!cl)
        return;
    if (sc->depth == SENT_MAX_DEPTH)
        sc->stuck = true;
    else
        sc->close[sc->depth++] = cl;
}

/* Whether c can start a sentence. */
static bool is_start(int32_t c)
{
    if (c < 0)
        return false;
    if (closer_of(c) || c == 0xBF || c == 0xA1) /* ¿ ¡ */
        return true;
    utf8proc_category_t cat = utf8proc_category(c);
    return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT ||
           cat == UTF8PROC_CATEGORY_LO || cat == UTF8PROC_CATEGORY_ND;
}

static bool is_letter(int32_t c)
{
    if (c < 0)
        return false;
    utf8proc_category_t cat = utf8proc_category(c);
    return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}

/* Whether w[0..n) is single letters joined by dots ("U.S", "e.g"), or one uppercase
   letter. */
static bool letters_and_dots(const char *w, size_t n)
{
    size_t i = 0;
    int letters = 0;
    while (i < n) {
        int32_t c = next_cp(w, n, &i);
        if (!is_letter(c))
            return false;
        letters++;
        if (i < n && w[i++] != '.')
            return false;
        if (i == n && w[n - 1] == '.')
            return false;
    }
    if (letters > 1)
        return true;
    size_t j = 0;
    int32_t c = n ? next_cp(w, n, &j) : -1;
    return c >= 0 && utf8proc_category(c) == UTF8PROC_CATEGORY_LU;
}

static bool in_list(const char *const *list, const char *w, size_t n)
{
    for (; *list; list++)
        if (strlen(*list) == n && memcmp(*list, w, n) == 0)
            return true;
    return false;
}

/* Whether the word s[word..dot) before a single '.' makes that '.' an abbreviation's,
   the next sentence would start at s[next]. */
static bool abbreviation(const Scan *sc, size_t word, size_t dot, size_t next)
{
    const char *w = sc->s + word;
    size_t n = dot - word;
    if (n == 0)
        return false;
    bool en = lang_eq(sc->lang, LANG_EN), fr = lang_eq(sc->lang, LANG_FR);
    if (in_list(en ? abbrev_en : fr ? abbrev_fr : abbrev_other, w, n))
        return true;
    if (en && in_list(abbrev_en_num, w, n)) {
        int32_t c = next_cp(sc->s, sc->len, &next);
        return c >= 0 && utf8proc_category(c) == UTF8PROC_CATEGORY_ND;
    }
    return letters_and_dots(w, n);
}

/* Whether a sentence ends at the run of marks ending at i (see sentences.h); if so,
   *end is where it ends and *next where the next one starts. */
static bool boundary(const Scan *sc, size_t i, size_t *end, size_t *next)
{
    int depth = sc->depth;
    size_t e = i;
    bool spaced = false;
    while (i < sc->len) {
        size_t at = i;
        int32_t c = next_cp(sc->s, sc->len, &i);
        int k = closes_to(sc->close, depth, c);
        if (is_space(c)) {
            spaced = true;
        } else if (k >= 0) {
            depth = k;
            e = i;
            spaced = false;
        } else {
            if (depth || !spaced || !is_start(c))
                return false;
            *end = e;
            *next = at;
            return true;
        }
    }
    return false;
}

static void push_span(SentSpan **spans, size_t *n, size_t *cap, size_t off, size_t end)
{
    if (*n == *cap) {
        *cap *= 2;
        XRENEW(*spans, *cap);
    }
    (*spans)[(*n)++] = (SentSpan){off, end - off};
}

size_t sent_split(const char *line, size_t len, Lang lang, SentSpan **spans)
{
    Scan sc = {.s = line, .len = len, .lang = lang};
    size_t n = 0, cap = 4;
    *spans = XNEW(SentSpan, cap);
    size_t start = len, last = 0, word = 0, i = 0;
    while (i < len) {
        size_t at = i;
        int32_t c = next_cp(line, len, &i);
        if (is_space(c)) {
            word = i;
            continue;
        }
        if (start == len)
            start = at;
        last = i;
        if (!is_mark(c)) {
            quote_step(&sc, c);
            if (at == word && closer_of(c))
                word = i;
            continue;
        }
        bool single = c == '.';
        for (;;) {
            size_t j = i;
            if (j >= len || !is_mark(next_cp(line, len, &j)))
                break;
            i = j;
            single = false;
        }
        last = i;
        size_t end, next;
        if (sc.stuck || !boundary(&sc, i, &end, &next) ||
            (single && abbreviation(&sc, word, at, next)))
            continue;
        push_span(spans, &n, &cap, start, end);
        start = word = i = next;
        sc.depth = 0;
    }
    if (start < len)
        push_span(spans, &n, &cap, start, last);
    return n;
}
