/* BLEU and chrF2 of one scored set; see scores.h. */
#include "eval/scores.h"

#include <string.h>

#include "eval/chrf.h"

int scores_compute(TextScores *s, const char *const *hyp, size_t n, const char *const *refs,
                   const size_t *ref_start, size_t *bad, Err *e)
{
    memset(s, 0, sizeof *s);
    BleuStats bs;
    ChrfStats cs;
    bleu_init(&bs);
    chrf_init(&cs);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *const *r = refs + ref_start[i];
        size_t nr = ref_start[i + 1] - ref_start[i];
        if (bleu_add(&bs, hyp[i], r, nr, e) != 0 || chrf_add(&cs, hyp[i], r, nr, e) != 0) {
            *bad = i;
            rc = -1;
        }
    }
    if (rc == 0) {
        bleu_score(&bs, &s->bleu);
        s->chrf = chrf_score(&cs);
        bleu_format(&s->bleu, NULL, &s->bleu_line);
        bleu_signature(&bs, &s->bleu_signature);
        chrf_signature(&cs, &s->chrf_signature);
    }
    bleu_free(&bs);
    chrf_free(&cs);
    return rc;
}

void scores_free(TextScores *s)
{
    buf_free(&s->bleu_line);
    buf_free(&s->bleu_signature);
    buf_free(&s->chrf_signature);
    memset(s, 0, sizeof *s);
}
