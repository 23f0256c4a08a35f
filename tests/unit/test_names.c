/* Name copying (--copy-names): which pairs hold a name on both sides, what an invented
   name is, that a renamed pair has every whole-word occurrence replaced on both sides
   and nothing else changed, that an epoch holds the renamed pairs when asked and none
   when not, that a filled batch holds their tokens exactly, and determinism by seed
   and epoch. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "data/concat.h"
#include "data/names.h"

/* A vocabulary of the specials, a few words and every ASCII letter as a unit alone
   and inside a word ("a", "a@@"), so that codes without merges spell any name. */
static Vocab *letters_vocab(void)
{
    Buf b = {0};
    buf_puts(&b, "<pad>\n<unk>\n<bos>\n<eos>\nTom\nest\nici\n.\nPaul\nMa@@\nry\net\nAt@@\nOK\nparti");
    for (int c = 0; c < 52; c++) {
        char l = c < 26 ? (char)('a' + c) : (char)('A' + c - 26);
        buf_printf(&b, "\n%c\n%c@@", l, l);
    }
    Vocab *v;
    cr_assert_eq(vocab_from_lines(&v, "test", b.data, b.len, NULL), 0);
    buf_free(&b);
    return v;
}

/* Pairs as ids of v, from words separated by spaces. */
typedef struct Data {
    PairSet set;
    int *src[8], *tgt[8], sl[8], tl[8];
} Data;

static int *encode(const Vocab *v, const char *s, int *n)
{
    int *ids = calloc(64, sizeof *ids);
    size_t unk = 0;
    *n = (int)vocab_encode(v, s, strlen(s), (int32_t *)ids, 64, &unk);
    cr_assert_eq(unk, 0, "%s", s);
    return ids;
}

static const char *const pairs[][2] = {
    {"Tom est ici .", "Tom est ici ."},          /* 0: a name on both sides */
    {"Paul est ici .", "est ici ."},             /* 1: a name on one side only */
    {"Ma@@ ry est ici .", "Ma@@ ry est ici ."}, /* 2: a name of two units: no unit to swap */
    {"Tom et Tom .", "Tom et Tom ."},            /* 3: twice on both sides */
    {"At@@ Tom est ici .", "Tom est parti ."},   /* 4: inside a word on the source side */
    {"OK .", "OK ."},                            /* 5: no lowercase letter */
    {"est Paul .", "Paul est parti ."},          /* 6: a name on both sides, not first */
};
enum { NPAIRS = sizeof pairs / sizeof *pairs };

static void data_make(Data *d, const Vocab *v)
{
    for (int i = 0; i < NPAIRS; i++) {
        d->src[i] = encode(v, pairs[i][0], &d->sl[i]);
        d->tgt[i] = encode(v, pairs[i][1], &d->tl[i]);
    }
    d->set = (PairSet){.n = NPAIRS, .src = d->src, .src_len = d->sl, .tgt = d->tgt, .tgt_len = d->tl};
}

static void data_free(Data *d)
{
    for (int i = 0; i < NPAIRS; i++) {
        free(d->src[i]);
        free(d->tgt[i]);
    }
}

typedef struct Fixture {
    Vocab *v;
    Bpe *bpe;
    Data d;
    NameCopy nc;
} Fixture;

static void fixture_make(Fixture *f, uint64_t seed)
{
    f->v = letters_vocab();
    const char codes[] = "#version: 0.2\n";
    cr_assert_eq(bpe_parse(&f->bpe, "codes", codes, strlen(codes), NULL), 0);
    data_make(&f->d, f->v);
    const Vocab *v[2] = {f->v, f->v};
    const Bpe *b[2] = {f->bpe, f->bpe};
    TokOpts to[2] = {{.lang = LANG_EN, .keep_case = true}, {.lang = LANG_FR, .keep_case = true}};
    Err e;
    cr_assert_eq(names_init(&f->nc, &f->d.set, v, b, to, seed, &e), 0, "%s", e.msg);
}

static void fixture_free(Fixture *f)
{
    names_free(&f->nc);
    data_free(&f->d);
    bpe_free(f->bpe);
    vocab_free(f->v);
}

/* The tokens of ids[0..n) joined by spaces. */
static void show(const Vocab *v, const int *ids, int n, Buf *out)
{
    buf_clear(out);
    for (int k = 0; k < n; k++) {
        if (k)
            buf_putc(out, ' ');
        buf_puts(out, vocab_token(v, ids[k]));
    }
    buf_putc(out, '\0');
}

Test(names, candidates_are_whole_words_of_both_sides)
{
    Fixture f;
    fixture_make(&f, 1);
    int tom = vocab_id(f.v, "Tom", 3), paul = vocab_id(f.v, "Paul", 4);
    cr_assert_eq(f.nc.ncand, 3);
    int want[][2] = {{0, tom}, {3, tom}, {6, paul}};
    for (int c = 0; c < 3; c++) {
        cr_expect_eq(f.nc.cand[2 * c], want[c][0], "candidate %d", c);
        cr_expect_eq(f.nc.cand[2 * c + 1], want[c][1], "candidate %d", c);
    }
    fixture_free(&f);
}

Test(names, invented_names_are_capitalized_words_of_letters)
{
    Fixture f;
    fixture_make(&f, 1);
    cr_assert_eq(f.nc.nnames, NAMES_INVENTED); /* every letter is in the vocabulary */
    Buf s = {0}, t = {0};
    int distinct = 0;
    for (int k = 0; k < f.nc.nnames; k++) {
        const int *o = f.nc.off + 2 * k;
        int ns = o[1] - o[0], nt = o[2] - o[1];
        cr_assert(ns >= 4 && ns <= NAMES_MAX_UNITS, "name %d: %d units", k, ns);
        show(f.v, f.nc.ids + o[0], ns, &s);
        show(f.v, f.nc.ids + o[1], nt, &t);
        cr_assert_str_eq(s.data, t.data); /* one vocabulary: the same units */
        cr_assert(s.data[0] >= 'B' && s.data[0] <= 'Z' && !strchr("EIOU", s.data[0]), "%s", s.data);
        for (int u = 0; u < ns; u++) {
            const char *unit = vocab_token(f.v, f.nc.ids[o[0] + u]);
            bool last = u == ns - 1;
            cr_assert_eq(strlen(unit), last ? 1u : 3u, "%s", s.data);
            cr_assert(u == 0 || (unit[0] >= 'a' && unit[0] <= 'z'), "%s", s.data);
        }
        if (k > 0) {
            const int *p = f.nc.off + 2 * (k - 1);
            distinct += p[1] - p[0] != ns || memcmp(f.nc.ids + p[0], f.nc.ids + o[0], (size_t)ns * sizeof(int));
        }
    }
    cr_expect_gt(distinct, NAMES_INVENTED * 9 / 10);
    buf_free(&s);
    buf_free(&t);
    fixture_free(&f);
}

Test(names, a_renamed_pair_swaps_every_whole_word_occurrence)
{
    Fixture f;
    fixture_make(&f, 1);
    Buf name = {0}, got = {0}, want = {0};
    int k = 7;
    const int *o = f.nc.off + 2 * k;
    show(f.v, f.nc.ids + o[0], o[1] - o[0], &name);
    int out[64], s, t;
    /* candidate 1: "Tom et Tom ." on both sides */
    cr_assert_eq(names_rename(&f.nc, &f.d.set, 1, k, 32, 32, out, &s, &t), 0);
    show(f.v, out, s, &got);
    buf_printf(&want, "%s et %s .", name.data, name.data);
    cr_expect_str_eq(got.data, want.data);
    show(f.v, out + s, t, &got);
    cr_expect_str_eq(got.data, want.data);
    /* candidate 2: "est Paul ." -> "Paul est parti ." */
    cr_assert_eq(names_rename(&f.nc, &f.d.set, 2, k, 32, 32, out, &s, &t), 0);
    show(f.v, out, s, &got);
    buf_clear(&want);
    buf_printf(&want, "est %s .", name.data);
    cr_expect_str_eq(got.data, want.data);
    show(f.v, out + s, t, &got);
    buf_clear(&want);
    buf_printf(&want, "%s est parti .", name.data);
    cr_expect_str_eq(got.data, want.data);
    /* a side over its limit: refused */
    int ns = o[1] - o[0];
    cr_expect_eq(names_rename(&f.nc, &f.d.set, 1, k, 2 * ns + 2, 32, out, &s, &t), 0);
    cr_expect_eq(names_rename(&f.nc, &f.d.set, 1, k, 2 * ns + 1, 32, out, &s, &t), -1);
    cr_expect_eq(names_rename(&f.nc, &f.d.set, 1, k, 32, 2 * ns + 1, out, &s, &t), -1);
    buf_free(&name);
    buf_free(&got);
    buf_free(&want);
    fixture_free(&f);
}

/* The renamed examples of c's set (after base's n pairs): checked against
   names_rename through a filled batch. Returns how many. */
static int check_renamed(const Fixture *f, const Concat *c)
{
    const PairSet *set = &c->set;
    int n = f->d.set.n, renamed = 0;
    BatchBuf bb;
    batch_buf_init(&bb, 1, 64, 65);
    for (int i = n; i < set->n; i++) {
        const int *j = c->join + 4 * (i - n);
        cr_assert_eq(j[0], -1, "example %d", i);
        Batch b;
        batch_fill(&b, &bb, set, &i, 1);
        cr_assert_eq(b.S, j[2]);
        cr_assert_eq(b.T, j[3] + 1);
        /* the renamed tokens are one candidate's pair with one invented name */
        bool found = false;
        int out[128], s, t;
        for (int cand = 0; cand < f->nc.ncand && !found; cand++)
            for (int k = 0; k < f->nc.nnames && !found; k++)
                found = names_rename(&f->nc, &f->d.set, cand, k, 64, 64, out, &s, &t) == 0 && s == b.S &&
                        t + 1 == b.T && !memcmp(out, b.src, (size_t)s * sizeof(int)) &&
                        !memcmp(out + s, b.tgt_out, (size_t)t * sizeof(int));
        cr_assert(found, "example %d", i);
        cr_assert_eq(b.tgt_in[0], 2);
        cr_assert_eq(b.tgt_out[b.T - 1], 3);
        renamed++;
    }
    batch_buf_free(&bb);
    return renamed;
}

Test(names, an_epoch_holds_renamed_pairs_when_asked_and_none_when_not)
{
    Fixture f;
    fixture_make(&f, 1);
    Err e;
    Concat c = {0};
    ConcatOpts o = {.share = 0, .max_s = 64, .max_t = 64, .rename = 0, .names = NULL};
    cr_assert_eq(concat_epoch(&c, &f.d.set, &o, 5, 0, &e), 0);
    cr_expect_eq(c.set.n, NPAIRS);
    cr_expect_null(c.set.base);

    o.rename = 2.0 / 3; /* 3 candidates: 2 renamed pairs */
    o.names = &f.nc;
    cr_assert_eq(concat_epoch(&c, &f.d.set, &o, 5, 0, &e), 0);
    cr_assert_eq(c.set.n, NPAIRS + 2);
    cr_expect_eq(check_renamed(&f, &c), 2);

    o.rename = 1; /* with joined pairs before them */
    o.share = 0.5;
    cr_assert_eq(concat_epoch(&c, &f.d.set, &o, 5, 0, &e), 0);
    cr_assert_eq(c.set.n, NPAIRS + NPAIRS + 3);
    int n = f.d.set.n;
    for (int i = n; i < n + NPAIRS; i++)
        cr_expect_geq(c.join[4 * (i - n)], 1, "joined pair %d", i);
    int renamed = 0;
    for (int i = n + NPAIRS; i < c.set.n; i++)
        renamed += c.join[4 * (i - n)] == -1;
    cr_expect_eq(renamed, 3);
    concat_free(&c);
    fixture_free(&f);
}

Test(names, the_same_seed_and_epoch_give_the_same_pairs)
{
    Fixture f, g;
    fixture_make(&f, 9);
    fixture_make(&g, 9);
    cr_assert_eq(f.nc.nnames, g.nc.nnames);
    cr_assert_eq(memcmp(f.nc.ids, g.nc.ids, (size_t)f.nc.off[2 * f.nc.nnames] * sizeof(int)), 0);
    Err e;
    ConcatOpts o = {.max_s = 64, .max_t = 64, .rename = 1, .names = &f.nc};
    Concat a = {0}, b = {0}, other = {0};
    cr_assert_eq(concat_epoch(&a, &f.d.set, &o, 3, 4, &e), 0);
    cr_assert_eq(concat_epoch(&b, &f.d.set, &o, 3, 4, &e), 0);
    cr_assert_eq(concat_epoch(&other, &f.d.set, &o, 3, 5, &e), 0);
    cr_assert_eq(a.set.n, b.set.n);
    size_t used = 0;
    for (int i = 0; i < a.set.n - NPAIRS; i++)
        used += (size_t)a.join[4 * i + 2] + (size_t)a.join[4 * i + 3];
    cr_expect_eq(memcmp(a.join, b.join, 4 * (size_t)(a.set.n - NPAIRS) * sizeof(int)), 0);
    cr_expect_eq(memcmp(a.mat, b.mat, used * sizeof(int)), 0);
    bool differs = other.set.n != a.set.n ||
                   memcmp(a.mat, other.mat, used * sizeof(int)) != 0;
    cr_expect(differs, "epoch 5 renamed as epoch 4");
    concat_free(&a);
    concat_free(&b);
    concat_free(&other);
    fixture_free(&f);
    fixture_free(&g);

    /* another seed invents other names */
    fixture_make(&f, 9);
    fixture_make(&g, 10);
    cr_expect_neq(memcmp(f.nc.ids, g.nc.ids, 16 * sizeof(int)), 0);
    fixture_free(&f);
    fixture_free(&g);
}
