/* Fuzz target: the tokenizer (tok_line) for English, French and a language without
   rules of its own (German: the generic rules), with and without keep_case, and the
   detokenizer (detok_line) on what it produced. */
#include <stdio.h>
#include <stdlib.h>

#include "base/utf8.h"
#include "base/buf.h"
#include "base/json.h"
#include "fuzz.h"
#include "text/tokenize.h"

/* Tokens are separated by single spaces, none empty, none with ASCII whitespace. */
static void check_tokens(const char *s, size_t len, long n)
{
    if (n == 0) {
        CHECK(len == 0);
        return;
    }
    long count = 1;
    CHECK(len > 0 && s[0] != ' ' && s[len - 1] != ' ');
    for (size_t i = 0; i < len; i++) {
        CHECK(s[i] != '\t' && s[i] != '\n' && s[i] != '\r' && s[i] != '\0');
        if (s[i] == ' ') {
            CHECK(s[i + 1] != ' ');
            count++;
        }
    }
    CHECK(count == n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    Err ue;
    int valid = tok_check_utf8(s, size, &ue) == 0;
    static const Lang langs[3] = {LANG_EN, LANG_FR, {"de"}};
    for (int k = 0; k < 6; k++) {
        TokOpts o = {.lang = langs[k % 3], .keep_case = k >= 3};
        Buf out = {0};
        buf_puts(&out, "x");
        Err e;
        long n = tok_line(s, size, &o, &out, &e);
        if (n < 0) {
            CHECK(!valid);
            CHECK(out.len == 1);
            fuzz_check_msg(&e, "invalid UTF-8 at byte ");
            CHECK(strcmp(e.msg, ue.msg) == 0);
            buf_free(&out);
            continue;
        }
        CHECK(valid);
        CHECK(utf8_valid(out.data + 1, out.len - 1));
        check_tokens(out.data + 1, out.len - 1, n);
        Buf text = {0};
        detok_line(out.data + 1, out.len - 1, o.lang, &text);
        CHECK(utf8_valid(text.data ? text.data : "", text.len));
        CHECK(n == 0 || text.len > 0);
        buf_free(&text);
        buf_free(&out);
    }
    return 0;
}
