/* Fuzz target: the JSON parser (json_parse) and the typed getters on every node. */
#include <stdlib.h>

#include "base/utf8.h"
#include "base/json.h"
#include "fuzz.h"

static void walk(const JsonVal *v, int depth)
{
    CHECK(depth <= JSON_MAX_DEPTH + 1);
    bool b;
    double d;
    int64_t i;
    const char *s;
    size_t len;
    Err e;
    CHECK((json_as_bool(v, &b, &e) == 0) == (v->type == JSON_BOOL));
    CHECK((json_as_num(v, &d, &e) == 0) == (v->type == JSON_NUMBER));
    if (json_as_int(v, &i, &e) == 0)
        CHECK(v->type == JSON_NUMBER && v->is_int && i == v->u.num.i);
    else
        fuzz_check_msg(&e, "JSON: ");
    switch (v->type) {
    case JSON_STRING:
        CHECK(v->u.str.s[v->u.str.len] == '\0');
        CHECK(utf8_valid(v->u.str.s, v->u.str.len));
        if (json_as_str(v, &s, &len, &e) == 0)
            CHECK(s == v->u.str.s && len == v->u.str.len && strlen(s) == len);
        else
            CHECK(strlen(v->u.str.s) < v->u.str.len);
        break;
    case JSON_NUMBER:
        CHECK(d == d); /* never NaN */
        break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        CHECK(json_len(v) == v->u.c.n);
        for (size_t k = 0; k < json_len(v); k++) {
            if (v->type == JSON_OBJECT) {
                const JsonKey *key = json_key_at(v, k);
                CHECK(key && key->s[key->len] == '\0' && utf8_valid(key->s, key->len));
                if (strlen(key->s) == key->len)
                    CHECK(json_get(v, key->s) == json_at(v, k));
            }
            walk(json_at(v, k), depth + 1);
        }
        CHECK(json_at(v, json_len(v)) == NULL);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy: the parser must not read past len. */
    char *copy = xmalloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    Json doc;
    Err e;
    if (json_parse(&doc, copy, size, &e) == 0) {
        walk(doc.root, 0);
        json_free(&doc);
    } else {
        fuzz_check_msg(&e, "JSON: ");
    }
    json_free(&doc);
    free(copy);
    return 0;
}
