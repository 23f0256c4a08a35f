/* Fuzz target: the .gz corpus path. The input is read as a gzip file (gz_inflate); what
   it decompresses to goes through the corpus reader as a corpus would. Besides, the
   input compressed with zlib must decompress to itself. */
#include <stdlib.h>
#include <zlib.h>

#include "fuzz.h"
#include "base/gzip.h"
#include "text/corpus.h"

static void round_trip(const uint8_t *data, size_t size)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        BUG("deflateInit2 failed");
    size_t cap = deflateBound(&z, (uLong)size) + 64;
    uint8_t *packed = xmalloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = packed;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        BUG("deflate did not finish");
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    char *out;
    size_t len;
    Err e;
    CHECK(gz_inflate("rt.gz", packed, n, &out, &len, &e) == 0);
    CHECK(len == size && (size == 0 || memcmp(out, data, size) == 0) && out[len] == '\0');
    free(out);
    free(packed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    round_trip(data, size);
    char *text;
    size_t len;
    Err e;
    if (gz_inflate("fuzz.tsv.gz", data, size, &text, &len, &e) != 0) {
        fuzz_check_msg(&e, "fuzz.tsv.gz: corrupt gzip data (");
        return 0;
    }
    CHECK(gz_magic(data, size));
    CHECK(text[len] == '\0');
    Corpus c;
    CorpusOpts o = corpus_opts_tatoeba(direction_make((Lang){"de"}, LANG_EN));
    o.skip_bad = true;
    if (corpus_parse(&c, "fuzz.tsv.gz", text, len, &o, &e) == 0) {
        CHECK(c.n > 0 && c.n + c.blank + c.bad == c.lines);
        corpus_free(&c);
    } else {
        fuzz_check_msg(&e, "fuzz.tsv.gz");
    }
    return 0;
}
