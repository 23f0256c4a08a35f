/* Fuzz target: the safetensors reader (st_parse) on the bytes, every tensor and
   metadata entry it accepts, and the model loader (model_file_parse). */
#include <stdlib.h>

#include "base/utf8.h"
#include "base/json.h"
#include "base/safetensors.h"
#include "fuzz.h"
#include "model/file.h"

static void check_st(const StFile *f)
{
    unsigned sum = 0;
    for (size_t i = 0; i < st_count(f); i++) {
        const StTensor *t = st_at(f, i);
        CHECK(t->ndim >= 0 && t->ndim <= ST_MAX_DIMS && st_dtype_name(t->dtype));
        CHECK(st_tensor(f, t->name) == t);
        CHECK(utf8_valid(t->name, strlen(t->name)));
        size_t nb = st_nbytes(t);
        CHECK(((uintptr_t)t->data % st_dtype_size(t->dtype)) == 0);
        const unsigned char *p = t->data;
        for (size_t k = 0; k < nb; k++)
            sum += p[k];
    }
    for (size_t i = 0; i < st_meta_count(f); i++) {
        const char *k = st_meta_key(f, i), *v = st_meta_val(f, i);
        CHECK(st_meta(f, k) == v);
        CHECK(utf8_valid(v, strlen(v)));
    }
    (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    StFile *f;
    Err e;
    if (st_parse(&f, "fuzz.st", data, size, NULL, &e) == 0) {
        check_st(f);
        st_close(f);
    } else {
        fuzz_check_msg(&e, "fuzz.st: ");
    }
    ModelFile mf;
    if (model_file_parse(&mf, "fuzz.s2s", data, size, false, &e) == 0) {
        const ModelConfig *c = &mf.model.cfg;
        CHECK(vocab_size(mf.src) == (size_t)c->src_vocab);
        CHECK(vocab_size(mf.tgt) == (size_t)c->tgt_vocab);
        Json h;
        CHECK(json_parse(&h, mf.history, strlen(mf.history), NULL) == 0);
        json_free(&h);
        model_file_free(&mf);
    } else {
        fuzz_check_msg(&e, "fuzz.s2s: ");
    }
    return 0;
}
