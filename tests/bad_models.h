/* Damaged copies of a valid model file, each with the exact error model_file_load
   gives for it; shared by the unit test of the loader and the end-to-end tests of the
   commands that read model files. */
#ifndef S2S_TESTS_BAD_MODELS_H
#define S2S_TESTS_BAD_MODELS_H

#include <stddef.h>

typedef struct BadModel {
    const char *what; /* what is wrong, for failure messages */
    char *bytes;      /* the whole file */
    size_t len;
    char *msg;        /* the error after "PATH: " */
} BadModel;

typedef struct BadModels {
    char *good;       /* path of the valid model file the variants come from */
    BadModel *v;
    size_t n;
} BadModels;

/* Writes the fixture model (fixture_text_model, seed 9) to DIR/good.s2s and builds
   the variants: the file truncated at every section boundary, a wrong header length,
   headers that lie about offsets, shapes and dtypes, a flipped data bit, broken
   s2s.config, vocabularies and history, and files of a foreign or another s2s kind. */
BadModels bad_models_make(const char *dir);
void bad_models_free(BadModels *b);

/* Writes bytes[0..len) to path. */
void bad_models_write(const char *path, const char *bytes, size_t len);

#endif
