/* Fuzz target: the parallel plain files of `s2s prepare --src --tgt`
   (corpus_read_parallel, text/corpus.h), strict and with skip_bad. The input is split
   at its first byte 0xFF (none: all source, an empty target; a gzip file may follow
   the split, since the reader takes either) into the source and the target file,
   written to two memory files read through /proc/self/fd. A refusal is one line
   naming one of the files; an accepted corpus holds pairs of both files' lines i,
   each valid UTF-8 without NUL, CR or tab, neither side blank. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/utf8.h"
#include "fuzz.h"
#include "text/corpus.h"

static int fds[2] = {-1, -1};
static char names[2][32];

static void put_file(int k, const uint8_t *data, size_t size)
{
    if (fds[k] < 0) {
        fds[k] = memfd_create(k ? "tgt" : "src", 0);
        if (fds[k] < 0)
            BUG("memfd_create failed");
        snprintf(names[k], sizeof names[k], "/proc/self/fd/%d", fds[k]);
    }
    if (ftruncate(fds[k], 0) != 0 || (size && pwrite(fds[k], data, size, 0) != (ssize_t)size))
        BUG("cannot write the memory file");
}

static void check_msg(const Err *e)
{
    size_t n = strnlen(e->msg, sizeof e->msg);
    CHECK(n > 0 && n < sizeof e->msg);
    CHECK(!memchr(e->msg, '\n', n));
    CHECK(!strncmp(e->msg, names[0], strlen(names[0])) || !strncmp(e->msg, names[1], strlen(names[1])));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *cut = memchr(data, 0xFF, size);
    size_t n0 = cut ? (size_t)(cut - data) : size;
    put_file(0, data, n0);
    put_file(1, cut ? cut + 1 : data, cut ? size - n0 - 1 : 0);
    for (int skip = 0; skip < 2; skip++) {
        CorpusOpts o = corpus_opts_pairs(DIRECTION_EN_FR);
        o.skip_bad = skip;
        Corpus c;
        Err e;
        if (corpus_read_parallel(&c, names[0], names[1], &o, &e) != 0) {
            check_msg(&e);
            continue;
        }
        CHECK(c.n > 0 && c.n + c.blank + c.bad == c.lines);
        CHECK(c.n_first_bad <= CORPUS_BAD_KEEP && c.n_first_bad <= c.bad);
        for (size_t i = 0; i < c.n_first_bad; i++)
            check_msg(&c.first_bad[i].err);
        for (size_t i = 0; i < c.n; i++) {
            const Pair *p = &c.pairs[i];
            CHECK(i == 0 || c.pairs[i - 1].line < p->line);
            CHECK(p->line >= 1 && p->line <= c.lines);
            CHECK(strlen(p->src) == p->src_len && strlen(p->tgt) == p->tgt_len);
            CHECK(!utf8_blank(p->src, p->src_len) && !utf8_blank(p->tgt, p->tgt_len));
            CHECK(!memchr(p->src, '\t', p->src_len) && !memchr(p->tgt, '\t', p->tgt_len));
            CHECK(!memchr(p->src, '\r', p->src_len) && !memchr(p->tgt, '\r', p->tgt_len));
            CHECK(utf8_check(p->src, p->src_len) == p->src_len);
            CHECK(utf8_check(p->tgt, p->tgt_len) == p->tgt_len);
        }
        corpus_free(&c);
    }
    return 0;
}
