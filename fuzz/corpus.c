/* Fuzz target: the sentence-pair corpus reader (corpus_parse), strict and with
   skip_bad, in both directions, with and without allow_empty, and source grouping on
   what it accepts. */
#include <stdlib.h>

#include "fuzz.h"
#include "text/corpus.h"
#include "base/utf8.h"

static void check_corpus(const Corpus *c, const CorpusOpts *o)
{
    if (c->n == 0) { /* accepted only as an empty file: no pairs, no bad lines */
        CHECK(o->allow_empty && c->bad == 0 && c->blank == c->lines);
        return;
    }
    CHECK(c->n <= c->lines);
    CHECK(c->n + c->blank + c->bad == c->lines);
    CHECK(c->n_first_bad <= CORPUS_BAD_KEEP && c->n_first_bad <= c->bad);
    for (size_t i = 0; i < c->n_first_bad; i++) {
        CHECK(i == 0 || c->first_bad[i - 1].line < c->first_bad[i].line);
        fuzz_check_msg(&c->first_bad[i].err, "fuzz.tsv:");
    }
    for (size_t i = 0; i < c->n; i++) {
        const Pair *p = &c->pairs[i];
        CHECK(i == 0 || c->pairs[i - 1].line < p->line);
        CHECK(p->line >= 1 && p->line <= c->lines);
        CHECK(strlen(p->src) == p->src_len && strlen(p->tgt) == p->tgt_len);
        CHECK(p->src_len > 0 && p->tgt_len > 0);
        CHECK(!memchr(p->src, '\t', p->src_len) && !memchr(p->tgt, '\t', p->tgt_len));
        CHECK(!memchr(p->src, '\r', p->src_len) && !memchr(p->tgt, '\r', p->tgt_len));
        CHECK(utf8_check(p->src, p->src_len) == p->src_len);
        CHECK(utf8_check(p->tgt, p->tgt_len) == p->tgt_len);
    }
    SourceGroups g;
    corpus_group_sources(c, &g);
    CHECK(g.n >= 1 && g.n <= c->n && g.start[0] == 0 && g.start[g.n] == c->n);
    for (size_t i = 0; i < c->n; i++) {
        size_t grp = g.group_of[i];
        CHECK(grp < g.n);
        const Pair *first = &c->pairs[g.member[g.start[grp]]];
        CHECK(strcmp(first->src, c->pairs[i].src) == 0);
    }
    source_groups_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int k = 0; k < 4; k++) {
        bool skip = k & 1;
        Corpus c;
        CorpusOpts o = corpus_opts_tatoeba(skip ? direction_make(LANG_FR, LANG_EN) : DIRECTION_EN_FR);
        o.skip_bad = skip;
        o.allow_empty = k >= 2;
        Err e;
        if (corpus_parse(&c, "fuzz.tsv", fuzz_cstr(data, size), size, &o, &e) == 0) {
            check_corpus(&c, &o);
            corpus_free(&c);
        } else {
            fuzz_check_msg(&e, "fuzz.tsv");
        }
    }
    return 0;
}
