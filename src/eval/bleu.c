#include "eval/bleu.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/strtab.h"
#include "eval/ngram.h"

struct BleuScratch {
    Buf a, b;        /* tokenizer passes */
    Buf low;         /* the lowercased source */
    Buf text;        /* tokenized hypothesis and references of the segment */
    uint32_t *ids;   /* token ids, hypothesis then each kept reference */
    size_t nids, capids;
    size_t *start;   /* per source: first index in ids; start[k+1]-start[k] = length */
    size_t capstart;
    StrTab toks;     /* the segment's distinct tokens: equal strings share one id */
    NgramTable ng;
};

/* ---- 13a tokenizer --------------------------------------------------------- */

/* Appends in[0..n-1] to out with every occurrence of pat replaced by rep
   (Python's str.replace: left to right, non-overlapping). */
static void replace_all(const char *in, size_t n, const char *pat, const char *rep, Buf *out)
{
    size_t pl = strlen(pat), rl = strlen(rep);
    const char *p = in, *end = in + n;
    buf_clear(out);
    buf_reserve(out, n);
    while (p < end) {
        const char *q = memmem(p, (size_t)(end - p), pat, pl);
        if (!q) {
            buf_append(out, p, (size_t)(end - p));
            break;
        }
        buf_append(out, p, (size_t)(q - p));
        buf_append(out, rep, rl);
        p = q + pl;
    }
}

static void swap_bufs(Buf *x, Buf *y)
{
    Buf t = *x;
    *x = *y;
    *y = t;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* mteval-v13a's punctuation class [\{-\~\[-\` -\&\(-\+\:-\@\/]. */
static bool is_punct13a(unsigned char c)
{
    return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
           (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == '/';
}

/* Empties y for a pass that writes at most cap bytes; the place to write at. */
static char *pass_begin(Buf *y, size_t cap)
{
    buf_clear(y);
    buf_reserve(y, cap);
    return y->data;
}

/* Ends a pass that wrote y->data up to o: y becomes its output, and x and y trade
   places so that x holds the result. */
static void pass_end(Buf *x, Buf *y, const char *o)
{
    y->len = (size_t)(o - y->data);
    y->data[y->len] = '\0';
    swap_bufs(x, y);
}

/* The byte-pair rules of passes 2-4 of mteval-v13a. */
typedef enum {
    PAIR_NONDIGIT_PERIOD, /* ([^0-9])([\.,]) -> "\1 \2 " */
    PAIR_PERIOD_NONDIGIT, /* ([\.,])([^0-9]) -> " \1 \2" */
    PAIR_DIGIT_DASH,      /* ([0-9])(-) -> "\1 \2 " */
} PairRule;

static bool is_period(char c) { return c == '.' || c == ','; }

static bool pair_matches(PairRule r, char c, char d)
{
    switch (r) {
    case PAIR_NONDIGIT_PERIOD:
        return !is_digit(c) && is_period(d);
    case PAIR_PERIOD_NONDIGIT:
        return is_period(c) && !is_digit(d);
    default:
        return is_digit(c) && d == '-';
    }
}

/* One pass of rule r over x (at most 2x the input); x then holds the result.
   Inlined at each call so that the rule is a constant in the byte loop. */
static inline __attribute__((always_inline)) void pair_pass(Buf *x, Buf *y, PairRule r)
{
    const char *s = x->data;
    size_t n = x->len;
    char *o = pass_begin(y, n * 2);
    bool lead = r == PAIR_PERIOD_NONDIGIT; /* the space goes before the pair, else after */
    for (size_t i = 0; i < n;) {
        if (i + 1 < n && pair_matches(r, s[i], s[i + 1])) {
            if (lead)
                *o++ = ' ';
            *o++ = s[i];
            *o++ = ' ';
            *o++ = s[i + 1];
            if (!lead)
                *o++ = ' ';
            i += 2;
        } else {
            *o++ = s[i++];
        }
    }
    pass_end(x, y, o);
}

/*
 * The four regular expressions of mteval-v13a, each applied to the whole
 * string with Python re.sub semantics (leftmost, non-overlapping matches,
 * scanning on after each match). They work byte by byte: every pattern
 * character is ASCII, a non-ASCII code point only ever plays the part of
 * [^0-9], and its UTF-8 bytes are copied unchanged whichever way the scan
 * steps over them, so the output equals the code-point-wise substitution.
 */
static void regex_passes(Buf *x, Buf *y)
{
    /* 1. ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 " (at most 3x the input) */
    const char *s = x->data;
    size_t n = x->len;
    char *o = pass_begin(y, n * 3);
    for (size_t i = 0; i < n; i++) {
        if (is_punct13a((unsigned char)s[i])) {
            *o++ = ' ';
            *o++ = s[i];
            *o++ = ' ';
        } else {
            *o++ = s[i];
        }
    }
    pass_end(x, y, o);

    pair_pass(x, y, PAIR_NONDIGIT_PERIOD);
    pair_pass(x, y, PAIR_PERIOD_NONDIGIT);
    pair_pass(x, y, PAIR_DIGIT_DASH);
}

/* Appends the whitespace-separated tokens of t[0..len) (valid UTF-8) to out, joined
   by single spaces (Python's ' '.join(t.split())); returns their number. */
static long split_join(const char *t, size_t len, Buf *out)
{
    long ntok = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int k = ngram_utf8_next(t + i, len - i, &cp);
        CHECK(k > 0);
        if (ngram_is_space(cp)) {
            i += (size_t)k;
            continue;
        }
        size_t j = i + (size_t)k;
        while (j < len) {
            k = ngram_utf8_next(t + j, len - j, &cp);
            CHECK(k > 0);
            if (ngram_is_space(cp))
                break;
            j += (size_t)k;
        }
        if (ntok)
            buf_putc(out, ' ');
        buf_append(out, t + i, j - i);
        ntok++;
        i = j;
    }
    return ntok;
}

/* Python's rstrip(): the length of s[0..n) without trailing whitespace; -1 with
   *bad on invalid UTF-8. */
static long rstrip_len(const char *s, size_t n, size_t *bad)
{
    size_t end = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = ngram_utf8_next(s + i, n - i, &cp);
        if (k < 0) {
            *bad = i;
            return -1;
        }
        i += (size_t)k;
        if (!ngram_is_space(cp))
            end = i;
    }
    return (long)end;
}

/*
 * Tokenizes s as sacreBLEU's BLEU._preprocess_segment + Tokenizer13a do:
 * rstrip, drop "<skipped>", join "-\n" hyphenations, newlines to spaces,
 * unescape &quot; &amp; &lt; &gt; (in that order, each over the whole string),
 * pad with a space on each side, the four regexes, split on whitespace.
 * Appends the tokens to out separated by single spaces; x and y are scratch.
 * Returns the token count, or -1 with *bad the offset of invalid UTF-8.
 */
static long tok13a(const char *s, Buf *x, Buf *y, Buf *out, size_t *bad)
{
    long end = rstrip_len(s, strlen(s), bad);
    if (end < 0)
        return -1;

    static const char *const repl[][2] = {
        {"<skipped>", ""}, {"-\n", ""}, {"\n", " "}, {"&quot;", "\""},
        {"&amp;", "&"},    {"&lt;", "<"}, {"&gt;", ">"},
    };
    buf_clear(x);
    buf_putc(x, ' ');
    buf_append(x, s, (size_t)end);
    buf_putc(x, ' ');
    /* The padding spaces cannot take part in any replacement pattern. Most
       lines contain none of the patterns' first characters: skip the passes. */
    bool lt = memchr(x->data, '<', x->len), nl = memchr(x->data, '\n', x->len),
         amp = memchr(x->data, '&', x->len);
    for (size_t r = 0; r < sizeof repl / sizeof repl[0]; r++) {
        char c0 = repl[r][0][0];
        if (!(c0 == '<' ? lt : c0 == '&' ? amp : nl))
            continue;
        if (!memmem(x->data, x->len, repl[r][0], strlen(repl[r][0])))
            continue;
        replace_all(x->data, x->len, repl[r][0], repl[r][1], y);
        swap_bufs(x, y);
    }
    regex_passes(x, y);

    return split_join(x->data, x->len, out);
}

/* Unicode general categories of the intl tokenizer. */
static bool is_cat_n(utf8proc_category_t c)
{
    return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}
static bool is_cat_p(utf8proc_category_t c)
{
    return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}
static bool is_cat_s(utf8proc_category_t c)
{
    return c >= UTF8PROC_CATEGORY_SM && c <= UTF8PROC_CATEGORY_SO;
}

/* The three substitutions of tokenizer_intl on code points (see bleu.h), from
   s[0..n) (valid UTF-8) into x; y is scratch. */
static void intl_passes(const char *s, size_t n, Buf *x, Buf *y)
{
    size_t m = 0;
    uint32_t *cp = xmalloc_array(n ? n : 1, sizeof *cp);
    utf8proc_category_t *cat = xmalloc_array(n ? n : 1, sizeof *cat);
    size_t *off = xmalloc_array(n + 1, sizeof *off);
    for (size_t i = 0; i < n; m++) {
        int k = ngram_utf8_next(s + i, n - i, &cp[m]);
        CHECK(k > 0);
        off[m] = i;
        cat[m] = utf8proc_category((utf8proc_int32_t)cp[m]);
        i += (size_t)k;
    }
    off[m] = n;
#define CP(i) (s + off[i]), (off[(i) + 1] - off[i])
    /* 1. (\P{N})(\p{P}) -> "\1 \2 " */
    buf_clear(y);
    for (size_t i = 0; i < m;) {
        if (i + 1 < m && !is_cat_n(cat[i]) && is_cat_p(cat[i + 1])) {
            buf_append(y, CP(i));
            buf_putc(y, ' ');
            buf_append(y, CP(i + 1));
            buf_putc(y, ' ');
            i += 2;
        } else {
            buf_append(y, CP(i));
            i++;
        }
    }
    free(cp);
    free(cat);
    free(off);
#undef CP
    /* 2. (\p{P})(\P{N}) -> " \1 \2" and 3. (\p{S}) -> " \1 ", on the result; the
       spaces pass 1 added are neither P nor N nor S. */
    for (int pass = 2; pass <= 3; pass++) {
        const char *t = y->data ? y->data : "";
        size_t tn = y->len;
        buf_clear(x);
        for (size_t i = 0; i < tn;) {
            uint32_t a;
            int ka = ngram_utf8_next(t + i, tn - i, &a);
            CHECK(ka > 0);
            utf8proc_category_t ca = utf8proc_category((utf8proc_int32_t)a);
            if (pass == 3) {
                if (is_cat_s(ca)) {
                    buf_putc(x, ' ');
                    buf_append(x, t + i, (size_t)ka);
                    buf_putc(x, ' ');
                } else {
                    buf_append(x, t + i, (size_t)ka);
                }
                i += (size_t)ka;
                continue;
            }
            size_t j = i + (size_t)ka;
            if (is_cat_p(ca) && j < tn) {
                uint32_t b;
                int kb = ngram_utf8_next(t + j, tn - j, &b);
                CHECK(kb > 0);
                if (!is_cat_n(utf8proc_category((utf8proc_int32_t)b))) {
                    buf_putc(x, ' ');
                    buf_append(x, t + i, (size_t)ka);
                    buf_putc(x, ' ');
                    buf_append(x, t + j, (size_t)kb);
                    i = j + (size_t)kb;
                    continue;
                }
            }
            buf_append(x, t + i, (size_t)ka);
            i = j;
        }
        if (pass == 2)
            swap_bufs(x, y);
    }
}

/* Tokenizes s (valid or not) with o's options into out (tokens separated by single
   spaces), x, y and low scratch; the token count, or -1 with *bad (0-based). */
static long tok_opts(const char *s, const BleuOpts *o, Buf *x, Buf *y, Buf *low, Buf *out,
                     size_t *bad)
{
    if (o->lowercase) {
        buf_clear(low);
        if (ngram_lower(s, low, bad) < 0)
            return -1;
        s = low->data ? low->data : "";
    }
    if (o->tok == BLEU_TOK_13A)
        return tok13a(s, x, y, out, bad);
    long end = rstrip_len(s, strlen(s), bad);
    if (end < 0)
        return -1;
    if (o->tok == BLEU_TOK_NONE)
        return split_join(s, (size_t)end, out);
    intl_passes(s, (size_t)end, x, y);
    return split_join(x->data ? x->data : "", x->len, out);
}

long bleu_tokenize(const char *s, Buf *out, Err *e)
{
    const BleuOpts o = {.tok = BLEU_TOK_13A};
    return bleu_tokenize_opts(s, &o, out, e);
}

long bleu_tokenize_opts(const char *s, const BleuOpts *o, Buf *out, Err *e)
{
    Buf x = {0}, y = {0}, low = {0};
    size_t bad = 0;
    long n = tok_opts(s, o, &x, &y, &low, out, &bad);
    buf_free(&x);
    buf_free(&y);
    buf_free(&low);
    if (n < 0)
        return err_set(e, "invalid UTF-8 at byte %zu", bad);
    return n;
}

const char *const bleu_tokenizer_names[3] = {"13a", "none", "intl"};

int bleu_tokenizer_parse(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, bleu_tokenizer_names[i]) == 0)
            return i;
    return -1;
}

/* ---- per-segment statistics ---------------------------------------------- */

void bleu_init(BleuStats *s) { memset(s, 0, sizeof *s); }

void bleu_init_opts(BleuStats *s, const BleuOpts *o)
{
    bleu_init(s);
    s->opts = *o;
}

void bleu_free(BleuStats *s)
{
    struct BleuScratch *sc = s->scratch;
    if (sc) {
        buf_free(&sc->a);
        buf_free(&sc->b);
        buf_free(&sc->low);
        buf_free(&sc->text);
        free(sc->ids);
        free(sc->start);
        strtab_free(&sc->toks);
        ngram_free(&sc->ng);
        free(sc);
    }
    memset(s, 0, sizeof *s);
}

static void clear_segment(struct BleuScratch *sc)
{
    strtab_clear(&sc->toks);
    sc->nids = 0;
    buf_clear(&sc->text);
    ngram_clear(&sc->ng);
}

/* Tokenizes one source, appends its token ids; -1 with *bad on invalid UTF-8. */
static int add_source(struct BleuScratch *sc, const BleuOpts *o, const char *str, size_t *bad)
{
    size_t from = sc->text.len;
    long n = tok_opts(str, o, &sc->a, &sc->b, &sc->low, &sc->text, bad);
    if (n < 0)
        return -1;
    if (sc->nids + (size_t)n > sc->capids) {
        while (sc->nids + (size_t)n > sc->capids)
            sc->capids = sc->capids ? sc->capids * 2 : 256;
        sc->ids = xrealloc_array(sc->ids, sc->capids, sizeof *sc->ids);
    }
    size_t i = from;
    while (i < sc->text.len) {
        size_t j = i;
        while (j < sc->text.len && sc->text.data[j] != ' ')
            j++;
        sc->ids[sc->nids++] = strtab_intern(&sc->toks, sc->text.data + i, j - i);
        i = j + 1;
    }
    buf_putc(&sc->text, ' '); /* keeps the next source's first token apart */
    return 0;
}

int bleu_add(BleuStats *s, const char *hyp, const char *const *refs, size_t nrefs, Err *e)
{
    size_t kept = ngram_refs_present(refs, nrefs, s->opts.keep_empty);
    if (kept == 0)
        return ngram_no_ref_error(e);

    if (!s->scratch) {
        s->scratch = xcalloc(1, sizeof *s->scratch);
        strtab_init(&s->scratch->toks, 128, false);
    }
    struct BleuScratch *sc = s->scratch;
    clear_segment(sc);
    if (kept + 2 > sc->capstart) {
        sc->capstart = kept + 2;
        sc->start = xrealloc_array(sc->start, sc->capstart, sizeof *sc->start);
    }

    size_t bad = 0, nsrc = 0;
    sc->start[nsrc++] = 0;
    if (add_source(sc, &s->opts, hyp, &bad) < 0)
        return err_set(e, "invalid UTF-8 at byte %zu of the hypothesis", bad);
    for (size_t k = 0; k < nrefs; k++) {
        if (!ngram_ref_present(refs[k], s->opts.keep_empty))
            continue;
        sc->start[nsrc++] = sc->nids;
        if (add_source(sc, &s->opts, refs[k], &bad) < 0)
            return err_set(e, "invalid UTF-8 at byte %zu of reference %zu", bad, k + 1);
    }
    sc->start[nsrc] = sc->nids;

    size_t hlen = sc->start[1];
    ngram_count_hyp(&sc->ng, sc->ids, hlen, BLEU_MAX_ORDER);

    /* Largest count of each hypothesis n-gram in any one reference, and the
       reference length closest to the hypothesis length (ties: shorter). */
    size_t best_len = 0, best_diff = SIZE_MAX;
    for (size_t k = 1; k < nsrc; k++) {
        size_t rlen = sc->start[k + 1] - sc->start[k];
        size_t diff = rlen > hlen ? rlen - hlen : hlen - rlen;
        if (diff < best_diff || (diff == best_diff && rlen < best_len)) {
            best_diff = diff;
            best_len = rlen;
        }
        ngram_count_ref(&sc->ng, sc->ids + sc->start[k], rlen, BLEU_MAX_ORDER, (uint32_t)k,
                        NULL);
    }

    for (size_t i = 0; i < sc->ng.len; i++) {
        const NgramEntry *en = &sc->ng.e[i];
        s->counts[en->n - 1] += en->hyp < en->best ? en->hyp : en->best;
    }
    for (unsigned n = 1; n <= BLEU_MAX_ORDER; n++)
        if (hlen >= n)
            s->totals[n - 1] += (long long)(hlen - n + 1);
    s->sys_len += (long long)hlen;
    s->ref_len += (long long)best_len;
    s->nrefs = ngram_nrefs_after(s->nrefs, s->nsegs, kept, BLEU_NREFS_VAR);
    s->nsegs++;
    return 0;
}

/* ---- scores ----------------------------------------------------------------- */

/* sacreBLEU's my_log: log, with log(0) taken as -9999999999. */
static double my_log(double x) { return x == 0.0 ? -9999999999.0 : log(x); }

void bleu_compute(const long long counts[BLEU_MAX_ORDER], const long long totals[BLEU_MAX_ORDER],
                  long long sys_len, long long ref_len, bool effective_order, BleuResult *r)
{
    memset(r, 0, sizeof *r);
    memcpy(r->counts, counts, sizeof r->counts);
    memcpy(r->totals, totals, sizeof r->totals);
    r->sys_len = sys_len;
    r->ref_len = ref_len;
    r->ratio = ref_len ? (double)sys_len / (double)ref_len : 0.0;
    if (sys_len < ref_len)
        r->bp = sys_len > 0 ? exp(1.0 - (double)ref_len / (double)sys_len) : 0.0;
    else
        r->bp = 1.0;

    bool any = false;
    for (int n = 0; n < BLEU_MAX_ORDER; n++)
        any |= counts[n] != 0;
    if (!any)
        return; /* score 0, precisions 0 */

    double smooth = 1.0;
    int eff_order = BLEU_MAX_ORDER;
    for (int n = 1; n <= BLEU_MAX_ORDER; n++) {
        if (totals[n - 1] == 0)
            break;
        if (effective_order)
            eff_order = n;
        if (counts[n - 1] == 0) {
            smooth *= 2.0;
            r->precisions[n - 1] = 100.0 / (smooth * (double)totals[n - 1]);
        } else {
            r->precisions[n - 1] = 100.0 * (double)counts[n - 1] / (double)totals[n - 1];
        }
    }
    double sum = 0.0;
    for (int n = 0; n < eff_order; n++)
        sum += my_log(r->precisions[n]);
    r->score = r->bp * exp(sum / eff_order);
}

void bleu_score(const BleuStats *s, BleuResult *r)
{
    bleu_compute(s->counts, s->totals, s->sys_len, s->ref_len, false, r);
}

int bleu_sentence(const char *hyp, const char *const *refs, size_t nrefs, bool effective_order,
                  BleuResult *r, Err *e)
{
    BleuStats s;
    bleu_init(&s);
    int rc = bleu_add(&s, hyp, refs, nrefs, e);
    if (rc == 0)
        bleu_compute(s.counts, s.totals, s.sys_len, s.ref_len, effective_order, r);
    bleu_free(&s);
    return rc;
}

void bleu_format(const BleuResult *r, const char *signature, Buf *out)
{
    buf_puts(out, "BLEU");
    if (signature) {
        buf_putc(out, '|');
        buf_puts(out, signature);
    }
    buf_printf(out, " = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)",
               r->score, r->precisions[0], r->precisions[1], r->precisions[2], r->precisions[3],
               r->bp, r->ratio, r->sys_len, r->ref_len);
}

void bleu_signature(const BleuStats *s, Buf *out) { bleu_signature_opts(s, false, out); }

void bleu_signature_opts(const BleuStats *s, bool effective_order, Buf *out)
{
    ngram_put_nrefs(out, s->nrefs, BLEU_NREFS_VAR);
    buf_printf(out, "|case:%s|eff:%s|tok:%s|smooth:exp", s->opts.lowercase ? "lc" : "mixed",
               effective_order ? "yes" : "no", bleu_tokenizer_names[s->opts.tok]);
}
