/* Tokenizer and detokenizer; the rules are in tokenize.h. */
#include "text/tokenize.h"

#include "base/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- Code point buffer: on the stack for ordinary lines, on the heap beyond. */

enum { CPS_LOCAL = 512 };

typedef struct Cps {
    int32_t *v;
    size_t n, cap;
    bool ascii; /* the line was all ASCII (no format characters to drop) */
    int32_t local[CPS_LOCAL];
} Cps;

static void cps_init(Cps *c)
{
    c->v = c->local;
    c->n = 0;
    c->cap = CPS_LOCAL;
    c->ascii = true;
}

static void cps_free(Cps *c)
{
    if (c->v != c->local)
        free(c->v);
    c->v = c->local;
}

/* Makes room for n code points; the old contents are lost. */
static void cps_ensure(Cps *c, size_t n)
{
    if (n <= c->cap)
        return;
    cps_free(c);
    c->v = xmalloc_array(n, sizeof *c->v);
    c->cap = n;
}

/* ---- Normalisation */

/* Applied by utf8proc to every code point before decomposition. */
static utf8proc_int32_t map_special(utf8proc_int32_t c, void *data)
{
    switch (c) {
    case 0x2018: case 0x2019: case 0x201B: case 0x02BC:
    case 0x2032: case 0x2035: case 0x00B4:
        return '\'';
    case 0x00A0: case 0x202F:
        return ' ';
    default:
        return c;
    }
}

int tok_check_utf8(const char *s, size_t len, Err *e)
{
    size_t bad = utf8_check(s, len);
    if (bad < len)
        return err_set(e, "invalid UTF-8 at byte %zu", bad + 1);
    return 0;
}

static utf8proc_ssize_t decompose(const uint8_t *s, size_t len, Cps *c, utf8proc_option_t opt)
{
    return utf8proc_decompose_custom(s, (utf8proc_ssize_t)len, c->v, (utf8proc_ssize_t)c->cap,
                                     opt, map_special, NULL);
}

/* Normalises s into c as code points. */
static int normalize_cps(const char *s, size_t len, const TokOpts *o, Cps *c, Err *e)
{
    const uint8_t *u = (const uint8_t *)s;
    size_t i = 0;
    while (i < len && u[i] < 0x80)
        i++;
    if (i == len) {
        cps_ensure(c, len);
        for (i = 0; i < len; i++) {
            int32_t ch = u[i];
            if (!o->keep_case && ch >= 'A' && ch <= 'Z')
                ch += 'a' - 'A';
            c->v[i] = ch;
        }
        c->n = len;
        c->ascii = true;
        return 0;
    }
    utf8proc_option_t opt = UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE;
    if (!o->keep_case)
        opt |= UTF8PROC_CASEFOLD;
    utf8proc_ssize_t n = decompose(u, len, c, opt);
    if (n > (utf8proc_ssize_t)c->cap) {
        cps_ensure(c, (size_t)n);
        n = decompose(u, len, c, opt);
    }
    if (n == UTF8PROC_ERROR_INVALIDUTF8)
        return err_set(e, "invalid UTF-8 at byte %zu", utf8_check((const char *)u, len) + 1);
    if (n >= 0)
        n = utf8proc_normalize_utf32(c->v, n, opt);
    if (n < 0)
        BUG("utf8proc: %s", utf8proc_errmsg(n));
    c->n = (size_t)n;
    c->ascii = false;
    return 0;
}

/* Appends n code points to out as UTF-8. */
static void put_cps(Buf *out, const int32_t *v, size_t n)
{
    buf_reserve(out, 4 * n);
    uint8_t *p = (uint8_t *)out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < 0x80)
            *p++ = (uint8_t)v[i];
        else
            p += utf8proc_encode_char(v[i], p);
    }
    out->len = (size_t)(p - (uint8_t *)out->data);
    out->data[out->len] = '\0';
}

int tok_normalize(const char *s, size_t len, const TokOpts *o, Buf *out, Err *e)
{
    Cps c;
    cps_init(&c);
    int rc = normalize_cps(s, len, o, &c, e);
    if (rc == 0)
        put_cps(out, c.v, c.n);
    cps_free(&c);
    return rc;
}

/* ---- Tokenization */

enum { C_SPACE, C_WORD, C_PUNCT, C_DROP };

static int cp_class(int32_t c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return C_WORD;
    if (c == ' ' || c == 0x200B)
        return C_SPACE;
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return C_WORD;
    case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_CC:
        return C_SPACE;
    case UTF8PROC_CATEGORY_CF:
        return utf8proc_get_property(c)->boundclass == UTF8PROC_BOUNDCLASS_CONTROL ? C_DROP
                                                                                    : C_PUNCT;
    default: /* P*, S*, private use, unassigned: tokens of their own */
        return C_PUNCT;
    }
}

static bool is_digit(int32_t c)
{
    return (c >= '0' && c <= '9') ||
           (c >= 0x80 && utf8proc_category(c) == UTF8PROC_CATEGORY_ND);
}

static bool is_letter(int32_t c)
{
    if (c < 0x80)
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}

/* Removes the ignorable format characters (C_DROP) from a non-ASCII line. */
static void drop_ignorable(Cps *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i] < 0x80 || cp_class(c->v[i]) != C_DROP)
            c->v[k++] = c->v[i];
    c->n = k;
}

/*
 * End of the extended grapheme cluster that starts at i. A space never joins a
 * cluster (UAX #29 lets a prepended mark such as U+0600 take a following space).
 */
static size_t cluster_end(const int32_t *v, size_t i, size_t n)
{
    size_t j = i + 1;
    if (j >= n || (v[i] < 0x80 && v[j] < 0x80))
        return j; /* CR LF is one cluster, but both are spaces anyway */
    utf8proc_int32_t state = 0;
    while (j < n && !utf8proc_grapheme_break_stateful(v[j - 1], v[j], &state) &&
           cp_class(v[j]) != C_SPACE)
        j++;
    return j;
}

/* True when v[0..n) is a French elided form (without its apostrophe). */
static bool is_elision(const int32_t *v, size_t n)
{
    static const char *const forms[] = {"c", "d", "j", "l", "m", "n", "s", "t", "qu",
                                        "jusqu", "lorsqu", "puisqu", "quoiqu", "quelqu"};
    char w[8];
    if (n == 0 || n >= sizeof w)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (v[i] >= 0x80)
            return false;
        w[i] = (char)(v[i] >= 'A' && v[i] <= 'Z' ? v[i] + ('a' - 'A') : v[i]);
    }
    w[n] = '\0';
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        if (strcmp(w, forms[i]) == 0)
            return true;
    return false;
}

typedef struct Emitter {
    Buf *out;
    const int32_t *v;
    long count;
} Emitter;

static void emit(Emitter *em, size_t from, size_t to)
{
    if (em->count > 0)
        buf_putc(em->out, ' ');
    put_cps(em->out, em->v + from, to - from);
    em->count++;
}

/*
 * Decides whether the single-code-point punctuation cluster v[i] joins the word
 * that runs from word_start (SIZE_MAX: none) to i, given that the next cluster,
 * starting at i + 1, is a word.
 */
static bool joins_word(const int32_t *v, size_t word_start, size_t i)
{
    int32_t c = v[i], prev = i > 0 ? v[i - 1] : ' ', next = v[i + 1];
    if (word_start == SIZE_MAX)
        return c == '-' && cp_class(prev) == C_SPACE && is_digit(next);
    if (c == '\'' || c == '-' || c == 0x2010)
        return true;
    if ((c == '.' || c == ',' || c == ':') && is_digit(prev) && is_digit(next))
        return true;
    return c == '.' && is_letter(prev) && is_letter(next);
}

long tok_line(const char *s, size_t len, const TokOpts *o, Buf *out, Err *e)
{
    Cps c;
    cps_init(&c);
    if (normalize_cps(s, len, o, &c, e) < 0) {
        cps_free(&c);
        return -1;
    }
    if (!c.ascii)
        drop_ignorable(&c);
    const int32_t *v = c.v;
    size_t n = c.n;
    Emitter em = {out, v, 0};
    size_t word = SIZE_MAX; /* start of the word being built */
    size_t i = 0, j = n ? cluster_end(v, 0, n) : 0;
    while (i < n) {
        size_t next_end = j < n ? cluster_end(v, j, n) : n;
        int k = cp_class(v[i]), next = j < n ? cp_class(v[j]) : C_SPACE;
        if (k == C_WORD) {
            if (word == SIZE_MAX)
                word = i;
        } else if (v[i] == '\'' && j == i + 1 && next != C_SPACE && lang_eq(o->lang, LANG_FR) &&
                   word != SIZE_MAX && is_elision(v + word, i - word)) {
            emit(&em, word, j); /* "j'ai", also "d'«" */
            word = SIZE_MAX;
        } else if (k == C_PUNCT && j == i + 1 && next == C_WORD && joins_word(v, word, i)) {
            if (word == SIZE_MAX)
                word = i;
        } else {
            if (word != SIZE_MAX)
                emit(&em, word, i);
            word = SIZE_MAX;
            if (k == C_PUNCT)
                emit(&em, i, j);
        }
        i = j;
        j = next_end;
    }
    if (word != SIZE_MAX)
        emit(&em, word, n);
    cps_free(&c);
    return em.count;
}

/* ---- Detokenization */

typedef struct Glue {
    bool left, right;  /* no space before / after the token */
} Glue;

typedef struct DetokState {
    bool fr, generic;      /* French rules; neither English nor French */
    bool dq_open, sq_open;
    bool low_open;         /* generic: an opening „ waits for its closing quote */
    bool guill_open;       /* generic: an opening guillemet waits for its closing one */
    size_t sq_left;        /* lone ' tokens after the current one */
    const char *prev;      /* previous token, NULL at the start */
    size_t prev_len;
} DetokState;

static bool is_lone(const char *t, size_t n, char c) { return n == 1 && t[0] == c; }

static Glue glue_of(const char *t, size_t n, DetokState *st)
{
    Glue g = {false, false};
    bool fr = st->fr;
    utf8proc_int32_t c;
    if (utf8proc_iterate((const uint8_t *)t, (utf8proc_ssize_t)n, &c) != (utf8proc_ssize_t)n) {
        /* several code points (or bytes that are not UTF-8): a word */
        g.right = fr && n > 1 && t[n - 1] == '\'';
        return g;
    }
    switch (c) {
    case ',': case '.': case '%': case 0x2026:
        g.left = true;
        return g;
    case '!': case '?':
        g.left = !fr || is_lone(st->prev, st->prev_len, '!') || is_lone(st->prev, st->prev_len, '?');
        return g;
    case ':': case ';':
        g.left = !fr;
        return g;
    case '/':
        g.left = g.right = true;
        return g;
    case 0xA1: case 0xBF: /* ¡ ¿ */
        g.right = true;
        return g;
    case 0xAB: case 0xBB: case 0x2039: case 0x203A: /* « » ‹ › */
        if (!st->generic)
            break;
        g.left = st->guill_open;
        g.right = !st->guill_open;
        st->guill_open = !st->guill_open;
        return g;
    case 0x201E: /* „ */
        if (st->generic)
            st->low_open = true;
        break;
    case 0x201C: case 0x201D: /* “ ” */
        if (!st->generic || !st->low_open)
            break;
        st->low_open = false;
        g.left = true;
        return g;
    case '"':
        g.left = st->dq_open;
        g.right = !st->dq_open;
        st->dq_open = !st->dq_open;
        return g;
    case '\'':
        st->sq_left--;
        if (st->sq_open) {
            g.left = true;
            st->sq_open = false;
        } else if (st->sq_left == 0 && st->prev_len > 0 &&
                   (st->prev[st->prev_len - 1] == 's' || st->prev[st->prev_len - 1] == 'S')) {
            g.left = true;
        } else {
            g.right = true;
            st->sq_open = true;
        }
        return g;
    }
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_PS:
        g.right = true;
        break;
    case UTF8PROC_CATEGORY_PE:
        g.left = true;
        break;
    case UTF8PROC_CATEGORY_PI:
        g.right = !(fr && (c == 0xAB || c == 0x2039));
        break;
    case UTF8PROC_CATEGORY_PF:
        g.left = !(fr && (c == 0xBB || c == 0x203A));
        break;
    case UTF8PROC_CATEGORY_SC:
        g.left = fr;
        g.right = !fr;
        break;
    default:
        break;
    }
    return g;
}

static bool is_sep(char c) { return c == ' ' || c == '\t'; }

/* Finds the next token at or after *pos; false at the end. */
static bool next_token(const char *s, size_t len, size_t *pos, const char **t, size_t *n)
{
    size_t i = *pos;
    while (i < len && is_sep(s[i]))
        i++;
    if (i >= len)
        return false;
    size_t j = i;
    while (j < len && !is_sep(s[j]))
        j++;
    *t = s + i;
    *n = j - i;
    *pos = j;
    return true;
}

void detok_line(const char *tokens, size_t len, Lang lang, Buf *out)
{
    bool fr = lang_eq(lang, LANG_FR);
    DetokState st = {.fr = fr, .generic = !fr && !lang_eq(lang, LANG_EN)};
    const char *t;
    size_t n, pos = 0;
    if (memchr(tokens, '\'', len))
        while (next_token(tokens, len, &pos, &t, &n))
            st.sq_left += is_lone(t, n, '\'');
    bool glue_next = true; /* nothing before the first token */
    pos = 0;
    while (next_token(tokens, len, &pos, &t, &n)) {
        Glue g = glue_of(t, n, &st);
        if (!glue_next && !g.left)
            buf_putc(out, ' ');
        buf_append(out, t, n);
        glue_next = g.right;
        st.prev = t;
        st.prev_len = n;
    }
}
