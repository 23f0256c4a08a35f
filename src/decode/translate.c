#include "decode/translate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/greedy.h"
#include "text/tokenize.h"

_Static_assert(sizeof(int) == sizeof(int32_t), "token ids are stored as int and int32_t");

void translate_free(char **out, int n)
{
    for (int i = 0; i < n; i++) {
        free(out[i]);
        out[i] = NULL;
    }
}

void translate_detok(const Vocab *tgt, const TextConfig *tc, const int *ids, int len, Buf *out)
{
    Buf toks = {0};
    for (int k = 0; k < len; k++) {
        if (k)
            buf_putc(&toks, ' ');
        buf_puts(&toks, vocab_token(tgt, ids[k]));
    }
    if (toks.len)
        detok_line(toks.data, toks.len, text_tgt_opts(tc).lang, out);
    buf_free(&toks);
}

int translate_lines(Model *m, const Vocab *src, const Vocab *tgt, const TextConfig *tc,
                    const char *const *lines, const size_t *lens, int n, const char *name,
                    const long *line_no, const TranslateOpts *o, char **out,
                    TranslateStats *st, Err *e)
{
    CHECK(n >= 0 && o->batch >= 1 && o->max_len >= 0);
    CHECK(vocab_size(src) == (size_t)m->cfg.src_vocab &&
          vocab_size(tgt) == (size_t)m->cfg.tgt_vocab);
    TranslateStats s = {.lines = n};
    size_t cnt = n ? (size_t)n : 1;

    /* Tokenize every line into one arena. */
    TokOpts so = text_src_opts(tc);
    Buf arena = {0};
    size_t *toff = xmalloc(cnt * sizeof *toff), *tlen = xmalloc(cnt * sizeof *tlen);
    int *slen = xmalloc(cnt * sizeof *slen);
    size_t total = 0;
    const int max_src = greedy_max_src_len(&m->cfg, o->max_len);
    for (int i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(lines[i]);
        long ln = line_no ? line_no[i] : (long)i + 1;
        toff[i] = arena.len;
        Err te;
        /* A NUL byte would read as a space: refuse it (bad UTF-8 before it first). */
        const char *nul = memchr(lines[i], '\0', len);
        long nt = -1;
        if (nul && tok_check_utf8(lines[i], (size_t)(nul - lines[i]), &te) != 0) {
            err_set(e, "%s:%ld: %s", name, ln, te.msg);
        } else if (nul) {
            err_set(e, "%s:%ld: NUL byte at byte %zu", name, ln, (size_t)(nul - lines[i]) + 1);
        } else if ((nt = tok_line(lines[i], len, &so, &arena, &te)) < 0) {
            err_set(e, "%s:%ld: %s", name, ln, te.msg);
        } else if (nt > max_src) {
            err_set(e, "%s:%ld: too long to translate: %ld tokens (at most %d for this model "
                       "and output length limit)", name, ln, nt, max_src);
            nt = -1;
        }
        if (nt < 0) {
            buf_free(&arena);
            free(toff);
            free(tlen);
            free(slen);
            return -1;
        }
        tlen[i] = arena.len - toff[i];
        slen[i] = (int)nt;
        total += (size_t)nt;
        if (nt > 0)
            s.sentences++;
    }

    /* Token ids. */
    int *ids = xmalloc((total ? total : 1) * sizeof *ids);
    int **srcp = xmalloc(cnt * sizeof *srcp);
    size_t pos = 0;
    for (int i = 0; i < n; i++) {
        srcp[i] = ids + pos;
        size_t unk = 0;
        size_t got = vocab_encode(src, arena.data ? arena.data + toff[i] : "", tlen[i],
                                  (int32_t *)(ids + pos), (size_t)slen[i], &unk);
        CHECK(got == (size_t)slen[i]);
        pos += got;
        s.src_unk += (long)unk;
    }
    s.src_tokens = (long)total;
    buf_free(&arena);
    free(toff);
    free(tlen);

    PairSet d = {n, srcp, slen, NULL, NULL};
    Hyps h;
    int rc = greedy_decode(m, &d, o->batch, o->max_len, &h, e);
    free(srcp);
    free(slen);
    free(ids);
    if (rc != 0)
        return -1; /* not reached: the ids come from the model's own vocabulary */

    Buf text = {0};
    for (int i = 0; i < n; i++) {
        buf_clear(&text);
        translate_detok(tgt, tc, h.ids[i], h.len[i], &text);
        out[i] = xstrndup(text.data ? text.data : "", text.len);
        s.hyp_tokens += h.len[i];
    }
    buf_free(&text);
    hyps_free(&h);
    if (st)
        *st = s;
    return 0;
}
