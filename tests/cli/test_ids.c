/* The token ids of a prepared directory (SPLIT.ids): the byte layout, the same ids as
   the text gives (words and subwords), every kind of damaged file refused by
   `s2s train` with nothing written, directories without them, and training that is
   bit for bit the same mapped or from the text. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "model_fixture.h"
#include "base/crc32.h"
#include "data/ids.h"
#include "data/prepared.h"
#include "model/file.h"

#define SMALL_MODEL "--arch", "rnn", "--emb", "16", "--hidden", "16", "--dec-hidden", "16", \
                    "--attn-size", "16", "--deep-out", "16", "--threads", "1", "--quiet"

static const char *const SPLITS[3] = {"train", "valid", "test"};

static void sh(const char *fmt, const char *a, const char *b)
{
    char *cmd = strf(fmt, a, b);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    free(cmd);
}

static void remove_ids(const char *dir)
{
    for (int s = 0; s < 3; s++) {
        char *p = strf("%s/%s.ids", dir, SPLITS[s]);
        cr_assert_eq(unlink(p), 0, "%s", p);
        free(p);
    }
}

static char *prepare(const char *dir, const char *name, const char *const *extra)
{
    char *out = strf("%s/%s", dir, name);
    const char *args[16] = {"prepare", "data/sample.tsv", "-o", out};
    int n = 4;
    for (; extra && *extra; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    RunResult r = run_s2s(NULL, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    return out;
}

/* A copy of a prepared directory without its .ids files, whose train.tsv is the
   split's text: prepared_load then tokenizes that split as training does without
   .ids files. */
static char *text_copy(const char *dir, const char *split)
{
    char *copy = strf("%s.text-%s", dir, split);
    sh("cp -r '%s' '%s'", dir, copy);
    remove_ids(copy);
    if (strcmp(split, "train") != 0) {
        char *from = strf("%s/%s.tsv", dir, split);
        sh("cp '%s' '%s/train.tsv'", from, copy);
        free(from);
    }
    return copy;
}

/* Pair i of a (mapped) and of b (from the text) are the same. */
static void expect_same_pair(const PairSet *a, const PairSet *b, int i)
{
    cr_assert_eq(pair_src_len(a, i), pair_src_len(b, i), "pair %d", i);
    cr_assert_eq(pair_tgt_len(a, i), pair_tgt_len(b, i), "pair %d", i);
    cr_assert(memcmp(pair_src(a, i), pair_src(b, i), (size_t)pair_src_len(b, i) * sizeof(int)) == 0, "pair %d", i);
    cr_assert(memcmp(pair_tgt(a, i), pair_tgt(b, i), (size_t)pair_tgt_len(b, i) * sizeof(int)) == 0, "pair %d", i);
}

static void expect_same_ids(const char *dir)
{
    for (int s = 0; s < 3; s++) {
        char *copy = text_copy(dir, SPLITS[s]);
        Prepared text;
        Err e;
        cr_assert_eq(prepared_load(&text, copy, &e), 0, "%s", e.msg);
        cr_assert_null(text.train.map.base);
        IdsPrint print;
        prepared_print(&text, &print);
        size_t nvocab[2] = {vocab_size(text.src_vocab), vocab_size(text.tgt_vocab)};
        char *path = strf("%s/%s.ids", dir, SPLITS[s]);
        IdsMap m;
        cr_assert_eq(ids_map(&m, path, &print, nvocab, &e), 0, "%s", e.msg);
        const PairSet *t = &text.train.set;
        cr_assert_eq(m.view.n, (size_t)t->n, "%s", path);
        cr_assert_gt(t->n, 0);
        PairSet mapped_set = {.n = (int)m.view.n, .ids = &m.view};
        size_t total = 0;
        int ext[3], want_ext[3];
        pair_extent(&mapped_set, &ext[0], &ext[1], &ext[2]);
        pair_extent(t, &want_ext[0], &want_ext[1], &want_ext[2]);
        cr_assert(ext[0] == want_ext[0] && ext[1] == want_ext[1] && ext[2] == want_ext[2], "%s: extents", path);
        for (int i = 0; i < t->n; i++) {
            cr_assert_eq(ids_pair_check(&m.view, (size_t)i, &e), 0, "%s", e.msg);
            expect_same_pair(&mapped_set, t, i);
            total += (size_t)(t->src_len[i] + t->tgt_len[i]);
        }
        cr_assert_eq(total, m.view.nids);
        if (s == 0) {
            /* and training's own load maps the file, with the same pairs */
            Prepared mapped;
            cr_assert_eq(prepared_load(&mapped, dir, &e), 0, "%s", e.msg);
            cr_assert_not_null(mapped.train.map.base);
            cr_assert_null(mapped.train.ids);
            cr_assert_eq(mapped.train.set.n, t->n);
            for (int i = 0; i < t->n; i++) {
                cr_assert_eq(ids_pair_check(mapped.train.set.ids, (size_t)i, &e), 0, "%s", e.msg);
                expect_same_pair(&mapped.train.set, t, i);
            }
            prepared_free(&mapped);
        }
        ids_unmap(&m);
        prepared_free(&text);
        free(path);
        rm_rf(copy);
        free(copy);
    }
}

Test(ids, the_ids_of_the_text_for_every_split_words)
{
    char *dir = tmpdir_new();
    char *p = prepare(dir, "words", NULL);
    expect_same_ids(p);
    free(p);
    rm_rf(dir);
    free(dir);
}

Test(ids, the_ids_of_the_text_for_every_split_subwords)
{
    char *dir = tmpdir_new();
    char *p = prepare(dir, "bpe", (const char *const[]){"--bpe", "150", NULL});
    char *codes = strf("%s/bpe.src", p);
    cr_assert(file_exists(codes));
    expect_same_ids(p);
    free(codes);
    free(p);
    p = prepare(dir, "joint", (const char *const[]){"--bpe", "150", "--joint", NULL});
    expect_same_ids(p);
    free(p);
    rm_rf(dir);
    free(dir);
}

static uint64_t u64_at(const unsigned char *p)
{
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = x << 8 | p[i];
    return x;
}

static uint32_t u32_at(const unsigned char *p) { return (uint32_t)u64_at(p) & 0xffffffffu; }

/* The bytes ids_write writes for set (through a file in a directory of its own, removed). */
static unsigned char *written(const IdsPairs *set, const IdsPrint *print, size_t *len)
{
    char *dir = tmpdir_new(), *path = strf("%s/x.ids", dir);
    Err e;
    cr_assert_eq(ids_write(path, set, print, &e), 0, "%s", e.msg);
    unsigned char *d = (unsigned char *)slurp(path, len);
    cr_assert_not_null(d);
    rm_rf(dir);
    free(path);
    free(dir);
    return d;
}

/* Two pairs written by ids_write, byte for byte as docs/model.md lays them out. */
Test(ids, layout_of_a_small_file)
{
    int s0[] = {5, 6}, t0[] = {7}, s1[] = {8}, t1[] = {9, 10, 4};
    int *src[] = {s0, s1}, *tgt[] = {t0, t1};
    int sl[] = {2, 1}, tl[] = {1, 3};
    IdsPairs set = {.n = 2, .src = src, .src_len = sl, .tgt = tgt, .tgt_len = tl};
    IdsPrint print = {{0x11111111u, 0x22222222u}, {0, 0x33333333u}};
    size_t len;
    unsigned char *d = written(&set, &print, &len);
    Err e;
    /* header, 5 offsets, 7 ids, one block checksum */
    cr_assert_eq(len, 64 + 8 * 5 + 4 * 7 + 4);
    cr_assert(memcmp(d, "s2s-ids\n", 8) == 0);
    cr_assert_eq(u32_at(d + 8), 2);
    uint32_t crc = crc32_update(0, d + 16, 48);
    cr_assert_eq(u32_at(d + 12), crc32_update(crc, d + len - 4, 4));
    cr_assert_eq(u64_at(d + 16), 2);
    cr_assert_eq(u64_at(d + 24), 7);
    cr_assert_eq(u32_at(d + 32), 0x11111111u);
    cr_assert_eq(u32_at(d + 36), 0x22222222u);
    cr_assert_eq(u32_at(d + 40), 0);
    cr_assert_eq(u32_at(d + 44), 0x33333333u);
    cr_assert_eq(u32_at(d + 48), 2); /* longest source */
    cr_assert_eq(u32_at(d + 52), 3); /* longest target */
    cr_assert_eq(u32_at(d + 56), 1); /* shortest target */
    cr_assert_eq(u32_at(d + 60), 4096);
    const uint64_t off[5] = {0, 2, 3, 4, 7};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(u64_at(d + 64 + 8 * i), off[i]);
    const uint32_t ids[7] = {5, 6, 7, 8, 9, 10, 4};
    for (int i = 0; i < 7; i++)
        cr_assert_eq(u32_at(d + 104 + 4 * i), ids[i]);
    cr_assert_eq(u32_at(d + 132), crc32_update(0, d + 64, 68));
    /* it reads back; a vocabulary of 10 entries is too small for id 10 */
    IdsView v;
    cr_assert_eq(ids_view(&v, d, len, "x.ids", &e), 0, "%s", e.msg);
    cr_assert_eq(ids_open(&v, &print, (size_t[2]){9, 11}, &e), 0, "%s", e.msg);
    PairSet back = {.n = 2, .ids = &v}, mem = {.n = 2, .src = src, .src_len = sl, .tgt = tgt, .tgt_len = tl};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(ids_pair_check(&v, (size_t)i, &e), 0, "%s", e.msg);
        expect_same_pair(&back, &mem, i);
    }
    ids_close(&v);
    cr_assert_eq(ids_open(&v, &print, (size_t[2]){9, 10}, &e), 0, "%s", e.msg);
    cr_assert_eq(ids_pair_check(&v, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(ids_pair_check(&v, 1, &e), -1);
    cr_assert_str_eq(e.msg, "x.ids: pair 2: target id 10 outside the vocabulary (10 entries); run 's2s "
                            "prepare' again to rewrite it");
    ids_close(&v);
    free(d);
}

/* Opening reads the header and the table of block checksums only; a damaged block is
   found when a pair in it is first checked, and only then, each block checked once. */
Test(ids, a_damaged_block_is_found_when_its_pairs_are_read)
{
    enum { N = 3000 };
    int **src = calloc(N, sizeof *src), **tgt = calloc(N, sizeof *tgt), *sl = calloc(N, sizeof *sl),
        *tl = calloc(N, sizeof *tl);
    for (int i = 0; i < N; i++) {
        sl[i] = 1 + i % 7;
        tl[i] = 1 + i % 5;
        src[i] = calloc((size_t)sl[i], sizeof(int));
        tgt[i] = calloc((size_t)tl[i], sizeof(int));
        for (int k = 0; k < sl[i]; k++)
            src[i][k] = 4 + (i + k) % 30;
        for (int k = 0; k < tl[i]; k++)
            tgt[i][k] = 4 + (i * 3 + k) % 30;
    }
    IdsPairs set = {.n = N, .src = src, .src_len = sl, .tgt = tgt, .tgt_len = tl};
    IdsPrint print = {{1, 2}, {0, 0}};
    size_t len;
    unsigned char *d = written(&set, &print, &len);
    Err e;
    /* body: 8 (2N + 1) bytes of offsets, then the ids */
    size_t nids = u64_at(d + 24), body = 8 * (2 * N + 1) + 4 * nids, nblocks = (body + 4095) / 4096;
    cr_assert_eq(len, 64 + body + 4 * nblocks);
    cr_assert_geq(nblocks, 10);
    /* the last id: the last pair's target, in the last block */
    d[64 + body - 4] ^= 0x01;
    IdsView v;
    cr_assert_eq(ids_view(&v, d, len, "x.ids", &e), 0, "%s", e.msg);
    cr_assert_eq(ids_open(&v, &print, (size_t[2]){40, 40}, &e), 0, "%s", e.msg);
    for (int i = 0; i < N / 2; i++) /* pairs in other blocks read well */
        cr_assert_eq(ids_pair_check(&v, (size_t)i, &e), 0, "pair %d: %s", i + 1, e.msg);
    cr_assert_eq(ids_pair_check(&v, N - 1, &e), -1);
    char *want = strf("x.ids: bytes %zu..%zu: checksum mismatch (the file is damaged); run 's2s "
                      "prepare' again to rewrite it", 64 + (nblocks - 1) * 4096, 64 + body);
    cr_assert_str_eq(e.msg, want);
    free(want);
    ids_close(&v);
    /* a damaged table entry is found on opening: the header's checksum covers it */
    d[64 + body - 4] ^= 0x01;
    d[len - 1] ^= 0x80;
    cr_assert_eq(ids_view(&v, d, len, "x.ids", &e), 0, "%s", e.msg);
    cr_assert_eq(ids_open(&v, &print, (size_t[2]){40, 40}, &e), -1);
    cr_assert_str_eq(e.msg, "x.ids: checksum mismatch (the file is damaged); run 's2s prepare' again "
                            "to rewrite it");
    for (int i = 0; i < N; i++) {
        free(src[i]);
        free(tgt[i]);
    }
    free(src);
    free(tgt);
    free(sl);
    free(tl);
    free(d);
}

/* Writes len bytes of data at offset at of path (or truncates it to at, data NULL). */
static void patch(const char *path, long at, const void *data, size_t len)
{
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    if (data) {
        cr_assert_eq(fseek(f, at, SEEK_SET), 0);
        cr_assert_eq(fwrite(data, 1, len, f), len);
    } else {
        cr_assert_eq(ftruncate(fileno(f), at), 0);
    }
    fclose(f);
}

/* The body's bytes (offsets and ids) of the ids file at path, from its header, and its
   number of checksum blocks. */
static long body_of(const char *path, long *nblocks)
{
    size_t len;
    unsigned char *h = (unsigned char *)slurp(path, &len);
    cr_assert_geq(len, 64);
    long body = 8 * (2 * (long)u64_at(h + 16) + 1) + 4 * (long)u64_at(h + 24);
    free(h);
    *nblocks = (body + 4095) / 4096;
    return body;
}

static long size_of(const char *path)
{
    size_t n;
    char *d = slurp(path, &n);
    free(d);
    return (long)n;
}

/* s2s train refuses the directory with exactly want (after "s2s: DIR/train.ids: "),
   exit 1, nothing written or changed under root; `s2s prepare` again then mends it. */
static void expect_refused(const char *root, const char *dir, const char *want, const char *const *again)
{
    char *before = dir_snapshot(root);
    char *model = strf("%s/m.s2s", root);
    RunResult r = RUN_S2S(NULL, "train", dir, "-o", model, "--steps", "1", SMALL_MODEL);
    cr_expect_eq(r.status, 1, "%s: %s", want, r.err);
    char *msg = strf("s2s: %s/train.ids: %s; run 's2s prepare' again to rewrite it\n", dir, want);
    cr_expect_str_eq(r.err, msg);
    run_free(&r);
    char *after = dir_snapshot(root);
    cr_expect_str_eq(after, before, "%s: something was written", want);
    const char *args[16] = {"prepare", "data/sample.tsv", "-o", dir};
    int n = 4;
    for (; again && *again; again++)
        args[n++] = *again;
    args[n] = NULL;
    r = run_s2s(NULL, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", dir, "-o", model, "--steps", "1", SMALL_MODEL);
    cr_expect_eq(r.status, 0, "%s: after prepare again: %s", want, r.err);
    run_free(&r);
    rm_rf(model);
    char *p;
    const char *const tails[] = {".last", ".state", ".log.jsonl"};
    for (int i = 0; i < 3; i++) {
        p = strf("%s%s", model, tails[i]);
        unlink(p);
        free(p);
    }
    free(after);
    free(before);
    free(msg);
    free(model);
}

Test(ids, damaged_truncated_foreign_other_version_or_other_vocabulary_refused)
{
    char *root = tmpdir_new();
    char *dir = prepare(root, "d", NULL);
    char *ids = strf("%s/train.ids", dir);
    long size = size_of(ids);

    /* one id of the last pair: its block's checksum, found when training first reads it */
    long nblocks, body = body_of(ids, &nblocks);
    patch(ids, 64 + body - 3, "\x01", 1);
    char *w = strf("bytes %ld..%ld: checksum mismatch (the file is damaged)", 64 + (nblocks - 1) * 4096,
                   64 + body);
    expect_refused(root, dir, w, NULL);
    free(w);
    patch(ids, size - 3, "\x01", 1); /* the table of block checksums: the header's checksum */
    expect_refused(root, dir, "checksum mismatch (the file is damaged)", NULL);
    patch(ids, 17, "\x02", 1); /* the pair count, + 256: the size no longer matches */
    long more_blocks, more = body_of(ids, &more_blocks);
    w = strf("truncated (%ld bytes, the header says %ld)", size, 64 + more + 4 * more_blocks);
    expect_refused(root, dir, w, NULL);
    free(w);
    patch(ids, size - 4, NULL, 0);
    w = strf("truncated (%ld bytes, the header says %ld)", size - 4, size);
    expect_refused(root, dir, w, NULL);
    free(w);
    patch(ids, 40, NULL, 0);
    expect_refused(root, dir, "truncated (40 bytes, the header alone has 64)", NULL);
    patch(ids, 0, NULL, 0);
    expect_refused(root, dir, "truncated (0 bytes, the header alone has 64)", NULL);
    write_file(ids, "source\ttarget\n");
    expect_refused(root, dir, "not an s2s ids file (no \"s2s-ids\" magic)", NULL);
    patch(ids, 8, "\x01", 1); /* the first format: one checksum over the whole file */
    expect_refused(root, dir, "format version 1; this s2s reads version 2", NULL);
    patch(ids, size, "\0\0\0\0", 4);
    w = strf("%ld bytes, the header says %ld", size + 4, size);
    expect_refused(root, dir, w, NULL);
    free(w);

    /* another split's file, of the same vocabularies: the pair count says it */
    char *valid = strf("%s/valid.ids", dir);
    sh("cp '%s' '%s'", valid, ids);
    expect_refused(root, dir, "holds 40 pairs, but prepare.json gives the training split 320 (another split's file?)",
                   NULL);
    free(valid);

    /* the ids of another vocabulary (other --min-freq), or of other codes */
    char *other = prepare(root, "other", (const char *const[]){"--min-freq", "1", NULL});
    sh("cp '%s/train.ids' '%s'", other, ids);
    expect_refused(root, dir, "encoded with another vocabulary than vocab.src", NULL);
    char *bpe = prepare(root, "bpe", (const char *const[]){"--bpe", "150", NULL});
    char *bpe2 = prepare(root, "bpe2", (const char *const[]){"--bpe", "120", NULL});
    sh("cp '%s/train.ids' '%s/train.ids'", dir, bpe);
    const char *const bpe_again[] = {"--bpe", "150", NULL};
    expect_refused(root, bpe, "encoded without subword codes, but the directory has bpe.src", bpe_again);
    sh("cp '%s/train.ids' '%s/train.ids'", bpe2, bpe);
    expect_refused(root, bpe, "encoded with other subword codes than bpe.src", bpe_again);
    sh("cp '%s/train.ids' '%s/train.ids'", bpe, dir);
    expect_refused(root, dir, "encoded with subword codes, but the directory has no bpe.src", NULL);

    free(bpe2);
    free(bpe);
    free(other);
    free(ids);
    free(dir);
    rm_rf(root);
    free(root);
}

/* The step and validation lines of a log, without the fields that differ between
   two runs (times, speeds). */
static char *losses(const char *log_path)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log);
    size_t cap = strlen(log) + 1, n = 0;
    char *out = calloc(cap, 1);
    int steps = 0;
    for (char *l = log; (l = strstr(l, "\"loss\": ")); l++) {
        char *end = strchr(l, ',');
        cr_assert_not_null(end);
        n += (size_t)snprintf(out + n, cap - n, "%.*s ", (int)(end - l - 8), l + 8);
        steps++;
    }
    cr_assert_geq(steps, 12);
    free(log);
    return out;
}

/* A directory prepared before .ids files existed still trains, from the text, and
   the mapped file gives the same run bit for bit: losses and weights. */
static void expect_same_run(const char *const *prep, const char *const *model_args)
{
    char *root = tmpdir_new();
    char *dir = prepare(root, "d", prep);
    char *old = strf("%s/old", root);
    sh("cp -r '%s' '%s'", dir, old);
    remove_ids(old);
    char *m[2] = {strf("%s/a.s2s", root), strf("%s/b.s2s", root)};
    const char *data[2] = {dir, old};
    for (int k = 0; k < 2; k++) {
        const char *args[40] = {"train", data[k], "-o", m[k], "--steps", "12", "--valid-every", "5", "--seed", "3"};
        int n = 10;
        for (const char *const *a = model_args; *a; a++)
            args[n++] = *a;
        args[n] = NULL;
        RunResult r = run_s2s(NULL, args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_free(&r);
    }
    char *la = strf("%s.log.jsonl", m[0]), *lb = strf("%s.log.jsonl", m[1]);
    char *sa = losses(la), *sb = losses(lb);
    cr_expect_str_eq(sa, sb, "mapped and text runs differ");
    char *pa = strf("%s.last", m[0]), *pb = strf("%s.last", m[1]);
    expect_same_weights(pa, pb);
    expect_same_weights(m[0], m[1]);
    /* the old directory was not given .ids files */
    char *gone = strf("%s/train.ids", old);
    cr_expect_not(file_exists(gone));
    free(gone);
    free(pa); free(pb); free(sa); free(sb); free(la); free(lb);
    free(m[0]); free(m[1]);
    free(old);
    free(dir);
    rm_rf(root);
    free(root);
}

Test(ids, training_is_bit_identical_mapped_or_from_the_text)
{
    expect_same_run(NULL, (const char *const[]){SMALL_MODEL, NULL});
    expect_same_run((const char *const[]){"--bpe", "150", NULL},
                    (const char *const[]){"--model-dim", "16", "--ff", "32", "--layers", "1", "--heads", "2",
                                          "--threads", "1", "--quiet", NULL});
}
