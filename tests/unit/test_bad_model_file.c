/* model_file_load on damaged model files (tests/bad_models.h): every variant is
   refused with its exact one-line message naming the file, the ModelFile is left
   empty, and (under the sanitizers) nothing leaks on the error paths. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "bad_models.h"
#include "helpers.h"
#include "model/file.h"

Test(bad_model_file, every_variant_is_refused_with_its_message)
{
    char *dir = tmpdir_new();
    BadModels b = bad_models_make(dir);
    ModelFile mf, zero;
    memset(&zero, 0, sizeof zero);
    Err e;
    cr_assert_eq(model_file_load(&mf, b.good, false, &e), 0, "the good file: %s", e.msg);
    model_file_free(&mf);

    char *path = strf("%s/bad.s2s", dir);
    for (size_t i = 0; i < b.n; i++) {
        const BadModel *v = &b.v[i];
        bad_models_write(path, v->bytes, v->len);
        memset(&e, 0, sizeof e);
        memset(&mf, 0x5a, sizeof mf);
        int rc = model_file_load(&mf, path, true, &e);
        cr_expect_eq(rc, -1, "%s: loads", v->what);
        if (rc == 0) {
            model_file_free(&mf);
            continue;
        }
        char *want = strf("%s: %s", path, v->msg);
        cr_expect_str_eq(e.msg, want, "%s: got\n  %s\nwant\n  %s", v->what, e.msg, want);
        cr_expect_eq(memcmp(&mf, &zero, sizeof mf), 0, "%s: ModelFile not emptied", v->what);
        free(want);
    }
    cr_expect_eq(b.n, 38, "%zu variants", b.n);
    free(path);
    bad_models_free(&b);
    rm_rf(dir);
    free(dir);
}
