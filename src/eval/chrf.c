#include "eval/chrf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/ngram.h"

struct ChrfScratch {
    Buf low;        /* a lowercased string */
    uint32_t *hyp;  /* code points of the hypothesis, whitespace removed */
    uint32_t *ref;  /* the same for all kept references, one after the other */
    size_t nhyp, caphyp, nref, capref;
    size_t *roff;   /* reference j: ref[roff[j] .. roff[j+1]) */
    size_t caproff;
    NgramTable ng;
};

void chrf_init(ChrfStats *s) { memset(s, 0, sizeof *s); }

void chrf_free(ChrfStats *s)
{
    struct ChrfScratch *sc = s->scratch;
    if (sc) {
        buf_free(&sc->low);
        free(sc->hyp);
        free(sc->ref);
        free(sc->roff);
        ngram_free(&sc->ng);
        free(sc);
    }
    memset(s, 0, sizeof *s);
}

/* Appends the code points of str, without whitespace, to (*cps)[*len..]; -1
   with *bad the byte offset of invalid UTF-8. */
static int decode(const char *str, uint32_t **cps, size_t *len, size_t *cap, size_t *bad)
{
    size_t n = strlen(str);
    if (*len + n > *cap) {
        *cap = (*len + n) * 2;
        *cps = xrealloc_array(*cps, *cap, sizeof **cps);
    }
    uint32_t *out = *cps;
    size_t m = *len;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = ngram_utf8_next(str + i, n - i, &cp);
        if (k < 0) {
            *bad = i;
            return -1;
        }
        i += (size_t)k;
        if (!ngram_is_space(cp))
            out[m++] = cp;
    }
    *len = m;
    return 0;
}

/* With s->lowercase, *out = str lowercased (in the scratch buffer, valid until the
   next call), else str; -1 with *bad on invalid UTF-8. */
static int lower(ChrfStats *s, const char *str, size_t *bad, const char **out)
{
    *out = str;
    if (!s->lowercase)
        return 0;
    buf_clear(&s->scratch->low);
    if (ngram_lower(str, &s->scratch->low, bad) < 0)
        return -1;
    *out = s->scratch->low.data ? s->scratch->low.data : "";
    return 0;
}

double chrf_compute(const long long hyp[CHRF_CHAR_ORDER], const long long ref[CHRF_CHAR_ORDER],
                    const long long match[CHRF_CHAR_ORDER])
{
    /* Operation order follows sacreBLEU so that results agree to the last bit. */
    const int factor = CHRF_BETA * CHRF_BETA;
    double avg_prec = 0.0, avg_rec = 0.0;
    int eff = 0;
    for (int i = 0; i < CHRF_CHAR_ORDER; i++) {
        if (hyp[i] > 0 && ref[i] > 0) {
            avg_prec += (double)match[i] / (double)hyp[i];
            avg_rec += (double)match[i] / (double)ref[i];
            eff++;
        }
    }
    if (eff == 0) {
        avg_prec = avg_rec = 0.0;
    } else {
        avg_prec /= eff;
        avg_rec /= eff;
    }
    if (avg_prec + avg_rec == 0.0)
        return 0.0;
    double score = (1 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100 * score;
}

int chrf_add(ChrfStats *s, const char *hyp, const char *const *refs, size_t nrefs, Err *e)
{
    size_t kept = ngram_refs_present(refs, nrefs, s->keep_empty);
    if (kept == 0)
        return ngram_no_ref_error(e);

    if (!s->scratch)
        s->scratch = xcalloc(1, sizeof *s->scratch);
    struct ChrfScratch *sc = s->scratch;

    /* Decode (and validate) everything before touching the statistics. */
    size_t bad = 0, nkept = 0;
    if (kept + 1 > sc->caproff) {
        sc->caproff = kept + 1;
        sc->roff = xrealloc_array(sc->roff, sc->caproff, sizeof *sc->roff);
    }
    sc->nhyp = 0;
    if (lower(s, hyp, &bad, &hyp) < 0 || decode(hyp, &sc->hyp, &sc->nhyp, &sc->caphyp, &bad) < 0)
        return err_set(e, "invalid UTF-8 at byte %zu of the hypothesis", bad);
    sc->nref = 0;
    for (size_t k = 0; k < nrefs; k++) {
        if (!ngram_ref_present(refs[k], s->keep_empty))
            continue;
        sc->roff[nkept++] = sc->nref;
        const char *r = refs[k];
        if (lower(s, r, &bad, &r) < 0 || decode(r, &sc->ref, &sc->nref, &sc->capref, &bad) < 0)
            return err_set(e, "invalid UTF-8 at byte %zu of reference %zu", bad, k + 1);
    }
    sc->roff[nkept] = sc->nref;
    size_t hlen = sc->nhyp;

    ngram_clear(&sc->ng);
    ngram_count_hyp(&sc->ng, sc->hyp, hlen, CHRF_CHAR_ORDER);

    long long best[3][CHRF_CHAR_ORDER] = {{0}};
    double best_f = -1.0;
    for (size_t j = 0; j < kept; j++) {
        const uint32_t *ref = sc->ref + sc->roff[j];
        size_t rlen = sc->roff[j + 1] - sc->roff[j];
        uint32_t stamp = (uint32_t)(j + 1);
        long long st[3][CHRF_CHAR_ORDER] = {{0}};
        for (unsigned n = 1; n <= CHRF_CHAR_ORDER && n <= rlen; n++) {
            /* Orders the reference is too short for keep hyp, ref, match at 0. */
            st[0][n - 1] = hlen >= n ? (long long)(hlen - n + 1) : 0;
            st[1][n - 1] = (long long)(rlen - n + 1);
        }
        ngram_count_ref(&sc->ng, ref, rlen, CHRF_CHAR_ORDER, stamp, st[2]);
        double f = chrf_compute(st[0], st[1], st[2]);
        if (f > best_f) {
            best_f = f;
            memcpy(best, st, sizeof best);
        }
    }

    for (int i = 0; i < CHRF_CHAR_ORDER; i++) {
        s->hyp[i] += best[0][i];
        s->ref[i] += best[1][i];
        s->match[i] += best[2][i];
    }
    s->nrefs = ngram_nrefs_after(s->nrefs, s->nsegs, kept, CHRF_NREFS_VAR);
    s->nsegs++;
    return 0;
}

double chrf_score(const ChrfStats *s) { return chrf_compute(s->hyp, s->ref, s->match); }

int chrf_sentence(const char *hyp, const char *const *refs, size_t nrefs, double *score, Err *e)
{
    ChrfStats s;
    chrf_init(&s);
    int rc = chrf_add(&s, hyp, refs, nrefs, e);
    if (rc == 0)
        *score = chrf_score(&s);
    chrf_free(&s);
    return rc;
}

void chrf_format(double score, const char *signature, Buf *out)
{
    buf_printf(out, "chrF%d", CHRF_BETA);
    if (signature) {
        buf_putc(out, '|');
        buf_puts(out, signature);
    }
    buf_printf(out, " = %.2f", score);
}

void chrf_signature(const ChrfStats *s, Buf *out)
{
    ngram_put_nrefs(out, s->nrefs, CHRF_NREFS_VAR);
    buf_printf(out, "|case:%s|eff:yes|nc:%d|nw:0|space:no", s->lowercase ? "lc" : "mixed",
               CHRF_CHAR_ORDER);
}
