/* The inputs of s2s prepare: a Tatoeba file or parallel plain files, and the model whose
   codes and vocabularies it may take (see prepare.h). */
#include "data/prepare.h"

#include <string.h>

#include "data/outside.h"

int prepare_direction_parse(const char *s, Direction *d)
{
    Direction n;
    if (direction_parse(s, &n) != 0 || lang_eq(n.src, n.tgt) ||
        !(lang_eq(n.src, LANG_EN) || lang_eq(n.tgt, LANG_EN)))
        return -1;
    *d = n;
    return 0;
}

int prepare_lang_from_name(const char *path, Lang *out)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".gz") == 0)
        n -= 3;
    size_t dot = n;
    while (dot > 0 && base[dot - 1] != '.')
        dot--;
    if (dot == 0 || n - dot > 3 || n - dot < 2)
        return -1;
    char ext[4];
    memcpy(ext, base + dot, n - dot);
    ext[n - dot] = '\0';
    /* Most three-letter extensions are not languages, though .txt, .src and .tgt are
       ISO 639-3 codes: three letters count when they name a language of two (deu) or one
       of the corpus languages that have no two-letter code. */
    static const char *const three[] = {"cmn", "yue", "wuu", "kab", "ber", "tok", "jbo", "lfn", "tlh", "shi", "zgh"};
    Lang l;
    if (lang_parse(ext, &l) != 0)
        return -1;
    bool known = strlen(l.code) == 2;
    for (size_t k = 0; !known && k < sizeof three / sizeof *three; k++)
        known = strcmp(l.code, three[k]) == 0;
    if (!known)
        return -1;
    *out = l;
    return 0;
}

int prepare_read_input(const PrepareOpts *o, Corpus *c, Err *e)
{
    CorpusOpts co;
    if (o->corpus) {
        co = corpus_opts_tatoeba(o->direction);
        co.skip_bad = o->skip_bad;
        return corpus_read(c, o->corpus, &co, e);
    }
    co = corpus_opts_pairs(o->direction);
    co.skip_bad = o->skip_bad;
    return corpus_read_parallel(c, o->src_file, o->tgt_file, &co, e);
}

/* A pair of file names as a one-line array. */
static void put_file_pair(JsonWriter *w, const char *key, const char *const files[2])
{
    json_open_array_line(w, key);
    json_put_str(w, NULL, files[0]);
    json_put_str(w, NULL, files[1]);
    json_close(w);
}

void prepare_put_inputs(JsonWriter *w, const PrepareOpts *o)
{
    if (o->corpus) {
        json_put_str(w, "corpus", o->corpus);
        return;
    }
    const char *const files[2] = {o->src_file, o->tgt_file};
    put_file_pair(w, "corpus", files);
}

int prepare_load_outside(const PrepareOpts *o, Outside x[2], Err *e)
{
    memset(x, 0, 2 * sizeof *x);
    TokOpts so = {.lang = o->direction.src, .keep_case = o->keep_case};
    TokOpts to = {.lang = o->direction.tgt, .keep_case = o->keep_case};
    const char *const *files[2] = {o->valid_files, o->test_files};
    for (int k = 0; k < 2; k++)
        if (files[k][0] && outside_load(&x[k], files[k][0], files[k][1], &so, &to,
                                        o->direction.src, o->direction.tgt, e) != 0) {
            outside_free(&x[0]);
            return -1;
        }
    if (o->valid_files[0] && o->test_files[0] && outside_check_disjoint(&x[0], &x[1], e) != 0) {
        outside_free(&x[0]);
        outside_free(&x[1]);
        return -1;
    }
    return 0;
}

void prepare_put_outside(JsonWriter *w, const PrepareOpts *o)
{
    if (!o->valid_files[0] && !o->test_files[0])
        return;
    const char *const *files[2] = {o->valid_files, o->test_files};
    for (int k = 0; k < 2; k++) {
        const char *key = k ? "test_files" : "valid_files";
        if (files[k][0])
            put_file_pair(w, key, files[k]);
        else
            json_put_null(w, key);
    }
}

PrepareLike prepare_like_model(const ModelFile *mf, const char *name)
{
    return (PrepareLike){.name = name, .text = mf->text, .vocab = {mf->src, mf->tgt}, .bpe = {mf->bpe[0], mf->bpe[1]}};
}

int prepare_like_check(const PrepareLike *like, const Prepared *d, Err *e)
{
    const char *what = NULL;
    if (strcmp(like->text.dir.name, d->text.dir.name) != 0)
        what = "another direction";
    else if (like->text.keep_case != d->text.keep_case)
        what = "another case setting";
    else if (!bpe_equal(like->bpe[0], d->bpe[0]) || !bpe_equal(like->bpe[1], d->bpe[1]))
        what = "other BPE codes";
    else if (!vocab_equal(like->vocab[0], d->src_vocab) || !vocab_equal(like->vocab[1], d->tgt_vocab))
        what = "other vocabularies";
    if (!what)
        return 0;
    return err_set(e, "%s was prepared with %s than %s; give the corpus instead, or prepare it with "
                      "'s2s prepare CORPUS -o DIR --model %s'", d->dir, what, like->name, like->name);
}
