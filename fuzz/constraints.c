/* Fuzz target: the input forms of constraints (decode/constraints.h). The first byte
   picks a JSON input line (cons_parse_line) or a glossary (glossary_parse, English
   source tokens, with or without ignoring case), which is then applied to the input
   read as a line. A refusal is one line; a parsed line has its text and every
   constraint, avoided phrase and prefix as C strings; a glossary adds only its target
   terms, each once. */
#include <stdlib.h>

#include "decode/constraints.h"
#include "fuzz.h"

static void check_msg(const Err *e)
{
    size_t n = strnlen(e->msg, sizeof e->msg);
    CHECK(n > 0 && n < sizeof e->msg);
    CHECK(!memchr(e->msg, '\n', n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *s = (const char *)data + 1;
    size_t len = size - 1;
    Err e;
    if (!(data[0] & 1)) {
        char *text;
        size_t tlen;
        TranslateCons c;
        if (cons_parse_line(s, len, &text, &tlen, &c, &e) != 0) {
            check_msg(&e);
            CHECK(translate_cons_empty(&c));
            return 0;
        }
        CHECK(text && strlen(text) <= tlen);
        for (int k = 0; k < c.n; k++)
            CHECK(c.phrases[k] != NULL);
        for (int k = 0; k < c.navoid; k++)
            CHECK(c.avoid[k] != NULL);
        if (len == 0 || s[0] != '{')
            CHECK(tlen == len && translate_cons_empty(&c));
        free(text);
        translate_cons_free(&c);
        return 0;
    }
    TokOpts o = {.lang = LANG_EN, .keep_case = true};
    Glossary *g;
    if (glossary_parse("g", s, len, &o, data[0] & 2, &g, &e) != 0) {
        check_msg(&e);
        return 0;
    }
    CHECK(glossary_terms(g) <= GLOSSARY_MAX_TERMS);
    TranslateCons c = {0};
    glossary_apply(g, s, len, &c);
    CHECK((size_t)c.n <= glossary_terms(g));
    for (int k = 0; k < c.n; k++)
        for (int j = 0; j < k; j++)
            CHECK(strcmp(c.phrases[k], c.phrases[j]) != 0);
    translate_cons_free(&c);
    glossary_free(g);
    return 0;
}
