/* base/json: the strict parser, lookups, typed getters, and lossless number writing. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "base/utf8.h"
#include "base/rng.h"

/* Parses a copy of text[0..len) in a buffer of exactly len bytes (no NUL after it),
   so that a read past the end is caught by the sanitizers. */
static int parse_n(Json *doc, const char *text, size_t len, Err *e)
{
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    int rc = json_parse(doc, copy, len, e);
    /* Strings of the tree live in the arena, not in the text: freeing it is safe. */
    free(copy);
    return rc;
}

static const JsonVal *parse_ok(Json *doc, const char *text)
{
    Err e = {{0}};
    int rc = parse_n(doc, text, strlen(text), &e);
    cr_assert_eq(rc, 0, "parse of '%s' failed: %s", text, e.msg);
    cr_assert_not_null(doc->root);
    return doc->root;
}

static void expect_err_n(const char *text, size_t len, const char *msg)
{
    Json doc;
    Err e = {{0}};
    int rc = parse_n(&doc, text, len, &e);
    cr_assert_eq(rc, -1, "parse of '%.*s' should fail with: %s", (int)len, text, msg);
    cr_assert_null(doc.root);
    cr_assert_str_eq(e.msg, msg, "input '%.*s'", (int)len, text);
    json_free(&doc);
}

static void expect_err(const char *text, const char *msg)
{
    expect_err_n(text, strlen(text), msg);
}

Test(json, scalars)
{
    Json d;
    const JsonVal *v = parse_ok(&d, "true");
    cr_assert_eq(v->type, JSON_BOOL);
    cr_assert(v->b);
    json_free(&d);
    v = parse_ok(&d, " false ");
    cr_assert_eq(v->type, JSON_BOOL);
    cr_assert(!v->b);
    cr_assert_eq(v->pos, 1);
    json_free(&d);
    v = parse_ok(&d, "\t\r\nnull\n");
    cr_assert_eq(v->type, JSON_NULL);
    json_free(&d);
    v = parse_ok(&d, "\"hi\"");
    cr_assert_eq(v->type, JSON_STRING);
    cr_assert_str_eq(v->u.str.s, "hi");
    cr_assert_eq(v->u.str.len, 2);
    json_free(&d);
}

Test(json, objects_keep_key_order_and_nest)
{
    Json d;
    const JsonVal *v = parse_ok(&d, "{\"z\": 1, \"a\": [true, {\"k\": \"v\"}, []], \"m\": {}}");
    cr_assert_eq(v->type, JSON_OBJECT);
    cr_assert_eq(json_len(v), 3);
    cr_assert_str_eq(json_key_at(v, 0)->s, "z");
    cr_assert_str_eq(json_key_at(v, 1)->s, "a");
    cr_assert_str_eq(json_key_at(v, 2)->s, "m");
    cr_assert_null(json_key_at(v, 3));
    const JsonVal *a = json_get(v, "a");
    cr_assert_eq(a, json_at(v, 1));
    cr_assert_eq(a->type, JSON_ARRAY);
    cr_assert_eq(json_len(a), 3);
    cr_assert_eq(json_at(a, 0)->type, JSON_BOOL);
    cr_assert_str_eq(json_get(json_at(a, 1), "k")->u.str.s, "v");
    cr_assert_eq(json_at(a, 2)->type, JSON_ARRAY);
    cr_assert_eq(json_len(json_at(a, 2)), 0);
    cr_assert_null(json_at(a, 3));
    cr_assert_eq(json_len(json_get(v, "m")), 0);
    cr_assert_eq(json_get(v, "m")->type, JSON_OBJECT);
    cr_assert_null(json_get(v, "nope"));
    cr_assert_null(json_get(a, "k"), "json_get on an array");
    cr_assert_null(json_get(NULL, "k"));
    cr_assert_null(json_key_at(a, 0), "arrays have no keys");
    cr_assert_eq(json_len(json_get(v, "z")), 0);
    cr_assert_eq(json_get(v, "z")->pos, 6);
    json_free(&d);
}

Test(json, many_members_and_items)
{
    Buf b = {0};
    buf_putc(&b, '{');
    for (int i = 0; i < 5000; i++)
        buf_printf(&b, "%s\"k%d\":[%d,%d]", i ? "," : "", i, i, -i);
    buf_putc(&b, '}');
    Json d;
    const JsonVal *v = parse_ok(&d, b.data);
    cr_assert_eq(json_len(v), 5000);
    for (int i = 0; i < 5000; i += 499) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        const JsonVal *a = json_get(v, key);
        cr_assert_eq(json_len(a), 2);
        cr_assert_eq(json_at(a, 0)->u.num.i, i);
        cr_assert_eq(json_at(a, 1)->u.num.i, -i);
    }
    json_free(&d);
    buf_free(&b);
}

static void expect_int(const char *text, int64_t want, double dwant)
{
    Json d;
    const JsonVal *v = parse_ok(&d, text);
    cr_assert_eq(v->type, JSON_NUMBER, "%s", text);
    cr_assert(v->is_int, "%s should be an exact integer", text);
    cr_assert_eq(v->u.num.i, want, "%s: %lld", text, (long long)v->u.num.i);
    cr_assert_eq(v->u.num.d, dwant, "%s: %.17g", text, v->u.num.d);
    int64_t got = 0;
    cr_assert_eq(json_as_int(v, &got, NULL), 0);
    cr_assert_eq(got, want);
    json_free(&d);
}

static void expect_float(const char *text, double want)
{
    Json d;
    const JsonVal *v = parse_ok(&d, text);
    cr_assert_eq(v->type, JSON_NUMBER, "%s", text);
    cr_assert(!v->is_int, "%s is not an exact int64", text);
    cr_assert_eq(v->u.num.d, want, "%s: %.17g", text, v->u.num.d);
    json_free(&d);
}

Test(json, numbers)
{
    expect_int("0", 0, 0);
    expect_int("-0", 0, -0.0);
    expect_int("12", 12, 12);
    expect_int("-12", -12, -12);
    expect_int("1e3", 1000, 1000);
    expect_int("1.5e1", 15, 15);
    expect_int("2500E-2", 25, 25);
    expect_int("0.000", 0, 0);
    expect_int("120e+0", 120, 120);
    expect_float("1.5", 1.5);
    expect_float("-0.25", -0.25);
    expect_float("1e-400", 0.0);
    expect_float("1.7976931348623157e308", 1.7976931348623157e308);
    expect_float("0.1", 0.1);
    expect_float("123456789e-3", 123456.789);
}

Test(json, big_integers_are_exact)
{
    expect_int("9007199254740993", 9007199254740993LL, 9007199254740992.0);
    expect_int("9223372036854775807", INT64_MAX, 9223372036854775807.0);
    expect_int("-9223372036854775808", INT64_MIN, -9223372036854775808.0);
    expect_int("12345678901234567890e-1", 1234567890123456789LL, 1234567890123456789.0);
    expect_int("922337203685477580.7e1", INT64_MAX, 9223372036854775807.0);
    expect_float("9223372036854775808", 9223372036854775808.0);
    expect_float("-9223372036854775809", -9223372036854775809.0);
    expect_float("18446744073709551616", 18446744073709551616.0);
    expect_float("1e19", 1e19);
    expect_float("1e-1000000000000", 0.0);
    expect_float("0.5e-99999999999999999999999", 0.0);
}

Test(json, strings_and_escapes)
{
    Json d;
    const JsonVal *v = parse_ok(&d, "\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\"");
    cr_assert_str_eq(v->u.str.s, "a\"b\\c/d\be\ff\ng\rh\ti");
    json_free(&d);
    v = parse_ok(&d, "\"\\u00e9\\u20AC\\ud83d\\ude00 \\u0041\"");
    cr_assert_str_eq(v->u.str.s, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 A");
    json_free(&d);
    /* Raw UTF-8 passes through: 2, 3 and 4 byte sequences, the extremes included. */
    v = parse_ok(&d, "\"h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9d\x84\x9e \xef\xbf\xbf \xf4\x8f\xbf\xbf \xc2\x80\"");
    cr_assert_str_eq(v->u.str.s, "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9d\x84\x9e \xef\xbf\xbf \xf4\x8f\xbf\xbf \xc2\x80");
    json_free(&d);
    v = parse_ok(&d, "\"a\\u0000b\"");
    cr_assert_eq(v->u.str.len, 3);
    cr_assert_eq(memcmp(v->u.str.s, "a\0b", 4), 0);
    const char *s = NULL;
    Err e = {{0}};
    cr_assert_eq(json_as_str(v, &s, NULL, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: string at byte 0 contains a NUL character");
    json_free(&d);
    v = parse_ok(&d, "{\"\\u00e9t\\u00e9\": \"\"}");
    cr_assert_str_eq(json_key_at(v, 0)->s, "\xc3\xa9t\xc3\xa9");
    cr_assert_eq(json_key_at(v, 0)->len, 5);
    cr_assert_not_null(json_get(v, "\xc3\xa9t\xc3\xa9"));
    cr_assert_eq(json_get(v, "\xc3\xa9t\xc3\xa9")->u.str.len, 0);
    json_free(&d);
}

Test(json, syntax_errors)
{
    expect_err("", "JSON: expected a value at byte 0 (end of input)");
    expect_err("   ", "JSON: expected a value at byte 3 (end of input)");
    expect_err("{\"a\":1 \"b\":2}", "JSON: expected ',' or '}' at byte 7");
    expect_err("[1 2]", "JSON: expected ',' or ']' at byte 3");
    expect_err("[1", "JSON: expected ',' or ']' at byte 2 (end of input)");
    expect_err("[1,]", "JSON: expected a value at byte 3");
    expect_err("[,1]", "JSON: expected a value at byte 1");
    expect_err("{\"a\":1,}", "JSON: expected a string key at byte 7");
    expect_err("{a:1}", "JSON: expected a string key or '}' at byte 1");
    expect_err("{", "JSON: expected a string key or '}' at byte 1 (end of input)");
    expect_err("{\"a\" 1}", "JSON: expected ':' at byte 5");
    expect_err("{\"a\":}", "JSON: expected a value at byte 5");
    expect_err("[1] x", "JSON: expected end of input at byte 4");
    expect_err("{} {}", "JSON: expected end of input at byte 3");
    expect_err_n("1\0", 2, "JSON: expected end of input at byte 1");
    expect_err("tru", "JSON: expected a value at byte 0");
    expect_err("[nul]", "JSON: expected a value at byte 1");
    expect_err("True", "JSON: expected a value at byte 0");
    expect_err("NaN", "JSON: expected a value at byte 0");
    expect_err("-Infinity", "JSON: expected a digit at byte 1");
    expect_err("'a'", "JSON: expected a value at byte 0");
    expect_err("\xef\xbb\xbf{}", "JSON: expected a value at byte 0");
    expect_err("// c\n{}", "JSON: expected a value at byte 0");
    expect_err("{} // c", "JSON: expected end of input at byte 3");
    expect_err("\f1", "JSON: expected a value at byte 0");
    expect_err("\xc2\xa0" "1", "JSON: expected a value at byte 0");
}

Test(json, number_errors)
{
    expect_err("01", "JSON: leading zeros are not allowed in numbers at byte 1");
    expect_err("-00", "JSON: leading zeros are not allowed in numbers at byte 2");
    expect_err("-", "JSON: expected a digit at byte 1 (end of input)");
    expect_err("-a", "JSON: expected a digit at byte 1");
    expect_err("1.", "JSON: expected a digit at byte 2 (end of input)");
    expect_err("1.e5", "JSON: expected a digit at byte 2");
    expect_err("1e", "JSON: expected a digit at byte 2 (end of input)");
    expect_err("1e+", "JSON: expected a digit at byte 3 (end of input)");
    expect_err("[1E-x]", "JSON: expected a digit at byte 4");
    expect_err(".5", "JSON: expected a value at byte 0");
    expect_err("+1", "JSON: expected a value at byte 0");
    expect_err("0x10", "JSON: expected end of input at byte 1");
    expect_err("1e400", "JSON: number out of range at byte 0");
    expect_err("[0, -1e1000000000000]", "JSON: number out of range at byte 4");
    expect_err("1.5.2", "JSON: expected end of input at byte 3");
}

Test(json, string_errors)
{
    expect_err("\"abc", "JSON: unterminated string at byte 0");
    expect_err("[\"abc\\\"]", "JSON: unterminated string at byte 1");
    expect_err("\"abc\\", "JSON: unterminated string at byte 0");
    expect_err("\"a\x01" "b\"", "JSON: control character in string at byte 2");
    expect_err("\"a\nb\"", "JSON: control character in string at byte 2");
    expect_err("\"a\tb\"", "JSON: control character in string at byte 2");
    expect_err_n("\"a\0b\"", 5, "JSON: control character in string at byte 2");
    expect_err("\"a\\qb\"", "JSON: invalid escape in string at byte 2");
    expect_err("\"\\x41\"", "JSON: invalid escape in string at byte 1");
    expect_err("\"\\U0041\"", "JSON: invalid escape in string at byte 1");
    expect_err("\"\\u12g4\"", "JSON: expected 4 hex digits after \\u at byte 1");
    expect_err("\"\\u12\"", "JSON: expected 4 hex digits after \\u at byte 1");
    expect_err("\"ab\\u\"", "JSON: expected 4 hex digits after \\u at byte 3");
    expect_err("\"\\ud800\"", "JSON: unpaired surrogate \\uD800 in string at byte 1");
    expect_err("\"\\uDBFFx\"", "JSON: unpaired surrogate \\uDBFF in string at byte 1");
    expect_err("\"\\ud800\\u0041\"", "JSON: unpaired surrogate \\uD800 in string at byte 1");
    expect_err("\"\\ud800\\ud800\"", "JSON: unpaired surrogate \\uD800 in string at byte 1");
    expect_err("\"\\ud800\\n\"", "JSON: unpaired surrogate \\uD800 in string at byte 1");
    expect_err("\"x\\udc00\"", "JSON: unpaired surrogate \\uDC00 in string at byte 2");
    expect_err("\"\\ud83d\\ude0\"", "JSON: unpaired surrogate \\uD83D in string at byte 1");
}

Test(json, invalid_utf8)
{
    static const char *bad[] = {
        "\"\xff\"",              /* never valid */
        "\"\x80\"",              /* stray continuation byte */
        "\"\xc0\xaf\"",          /* overlong '/' */
        "\"\xc1\xbf\"",          /* overlong */
        "\"\xe0\x80\xaf\"",      /* overlong, 3 bytes */
        "\"\xf0\x80\x80\xaf\"",  /* overlong, 4 bytes */
        "\"\xed\xa0\x80\"",      /* UTF-16 surrogate D800 */
        "\"\xed\xbf\xbf\"",      /* surrogate DFFF */
        "\"\xf4\x90\x80\x80\"",  /* above U+10FFFF */
        "\"\xf5\x80\x80\x80\"",
        "\"\xe2\x82\"",          /* truncated before the quote */
        "\"\xe2\x82x\"",
        "\"\xc3\"",
        "\"\xf0\x9f\x98\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_err(bad[i], "JSON: invalid UTF-8 in string at byte 1");
    expect_err("{\"ok\":\"\xc3\xa9\xc3\"}", "JSON: invalid UTF-8 in string at byte 9");
    expect_err("{\"k\xff\":1}", "JSON: invalid UTF-8 in string at byte 3");
    expect_err_n("\"\xe2\x82", 3, "JSON: unterminated string at byte 0");
}

Test(json, duplicate_keys)
{
    expect_err("{\"a\":1,\"b\":2,\"a\":3}", "JSON: duplicate key 'a' at byte 13");
    expect_err("{\"x\":{\"a\":1,\"a\":1}}", "JSON: duplicate key 'a' at byte 12");
    /* Same key once escaped, once not. */
    expect_err("{\"\\u0061\":1,\"a\":2}", "JSON: duplicate key 'a' at byte 12");
    expect_err("{\"a\\u0000\":1,\"a\\u0000\":2}", "JSON: duplicate key 'a\\x00' at byte 13");
    /* Many members: the hashed check reports the first repeat in document order. */
    Buf b = {0};
    buf_putc(&b, '{');
    for (int i = 0; i < 300; i++)
        buf_printf(&b, "\"k%03d\":%d,", i, i);
    size_t at = b.len;
    buf_puts(&b, "\"k123\":0,\"k007\":0}");
    char *msg = NULL;
    cr_assert(asprintf(&msg, "JSON: duplicate key 'k123' at byte %zu", at) > 0);
    expect_err(b.data, msg);
    free(msg);
    buf_free(&b);
    /* Equal keys in different objects are fine; a prefix is not a duplicate. */
    Json d;
    parse_ok(&d, "{\"a\":{\"a\":{\"a\":1}},\"ab\":2,\"b\":[{\"a\":1},{\"a\":2}]}");
    json_free(&d);
}

/* depth arrays "[[[1]]]" or objects "{"k":{"k":1}}" inside each other. */
static char *nested(int depth, bool object)
{
    char *s = malloc((size_t)depth * 6 + 8);
    size_t n = 0;
    for (int i = 0; i < depth; i++) {
        if (object) {
            memcpy(s + n, "{\"k\":", 5);
            n += 5;
        } else {
            s[n++] = '[';
        }
    }
    s[n++] = '1';
    for (int i = 0; i < depth; i++)
        s[n++] = object ? '}' : ']';
    s[n] = '\0';
    return s;
}

Test(json, nesting_limit)
{
    Json d;
    char *ok = nested(JSON_MAX_DEPTH, false);
    const JsonVal *v = parse_ok(&d, ok);
    for (int i = 0; i < JSON_MAX_DEPTH; i++) {
        cr_assert_eq(v->type, JSON_ARRAY);
        v = json_at(v, 0);
    }
    cr_assert_eq(v->u.num.i, 1);
    json_free(&d);
    free(ok);

    char *deep = nested(JSON_MAX_DEPTH + 1, false);
    expect_err(deep, "JSON: nesting deeper than 64 at byte 64");
    free(deep);

    char *obj = nested(JSON_MAX_DEPTH, true);
    parse_ok(&d, obj);
    json_free(&d);
    free(obj);
    obj = nested(JSON_MAX_DEPTH + 1, true);
    expect_err(obj, "JSON: nesting deeper than 64 at byte 320");
    free(obj);

    /* Far deeper than any stack would take without the limit. */
    size_t n = 1000000;
    char *huge = malloc(n);
    memset(huge, '[', n);
    expect_err_n(huge, n, "JSON: nesting deeper than 64 at byte 64");
    free(huge);
}

Test(json, input_need_not_be_nul_terminated)
{
    Json d;
    Err e = {{0}};
    const char *text = "[12345, \"abc\", true]";
    cr_assert_eq(parse_n(&d, "123456", 3, &e), 0);
    cr_assert_eq(d.root->u.num.i, 123);
    json_free(&d);
    /* Every proper prefix of a document that is an array is an error, never a crash. */
    for (size_t len = 0; len < strlen(text); len++) {
        cr_assert_eq(parse_n(&d, text, len, &e), -1, "prefix %zu", len);
        cr_assert_null(d.root);
    }
    cr_assert_eq(parse_n(&d, text, strlen(text), &e), 0);
    json_free(&d);
}

Test(json, typed_getters)
{
    Json d;
    const JsonVal *v = parse_ok(&d, "{\"i\": 42, \"f\": 1.5, \"s\": \"str\", \"b\": true, "
                                    "\"n\": null, \"a\": [], \"o\": {}, \"big\": 1e19}");
    int64_t i = 0;
    double f = 0;
    const char *s = NULL;
    size_t len = 0;
    bool b = false;
    Err e = {{0}};
    cr_assert_eq(json_as_int(json_get(v, "i"), &i, &e), 0);
    cr_assert_eq(i, 42);
    cr_assert_eq(json_as_num(json_get(v, "i"), &f, &e), 0);
    cr_assert_eq(f, 42.0);
    cr_assert_eq(json_as_num(json_get(v, "f"), &f, &e), 0);
    cr_assert_eq(f, 1.5);
    cr_assert_eq(json_as_str(json_get(v, "s"), &s, &len, &e), 0);
    cr_assert_str_eq(s, "str");
    cr_assert_eq(len, 3);
    cr_assert_eq(json_as_bool(json_get(v, "b"), &b, &e), 0);
    cr_assert(b);

    cr_assert_eq(json_as_int(json_get(v, "s"), &i, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: expected an integer at byte 25, found a string");
    cr_assert_eq(json_as_int(json_get(v, "f"), &i, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: expected an integer at byte 15, found a number that is not "
                            "an integer in the 64-bit range");
    cr_assert_eq(json_as_int(json_get(v, "big"), &i, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: expected an integer at byte 79, found a number that is not "
                            "an integer in the 64-bit range");
    cr_assert_eq(json_as_str(json_get(v, "i"), &s, NULL, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: expected a string at byte 6, found a number");
    cr_assert_eq(json_as_bool(json_get(v, "n"), &b, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: expected a boolean at byte 48, found null");
    cr_assert_eq(json_as_num(json_get(v, "a"), &f, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: expected a number at byte 59, found an array");
    cr_assert_eq(json_as_num(json_get(v, "o"), &f, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: expected a number at byte 68, found an object");
    cr_assert_eq(json_as_str(json_get(v, "missing"), &s, NULL, &e), -1);
    cr_assert_str_eq(e.msg, "JSON: expected a string, found nothing");
    cr_assert_eq(i, 42, "a failed getter leaves the output alone");
    json_free(&d);
}

Test(json, free_is_idempotent_and_safe_after_error)
{
    Json d;
    Err e;
    cr_assert_eq(json_parse(&d, "[", 1, &e), -1);
    json_free(&d);
    json_free(&d);
    parse_ok(&d, "[1]");
    json_free(&d);
    json_free(&d);
    cr_assert_null(d.root);
}

Test(json, show_escapes_and_shortens)
{
    char out[16];
    cr_assert_str_eq(json_show(out, sizeof out, "ab", 2), "ab");
    cr_assert_str_eq(json_show(out, sizeof out, "a\nb\\", 4), "a\\x0ab\\\\");
    cr_assert_str_eq(json_show(out, sizeof out, "a\0b", 3), "a\\x00b");
    cr_assert_str_eq(json_show(out, sizeof out, "0123456789abcdefghij", 20), "0123456789ab...");
    /* A multi-byte character is never cut in half. */
    cr_assert_str_eq(json_show(out, sizeof out, "0123456789\xc3\xa9\xc3\xa9xyz", 17),
                     "0123456789\xc3\xa9...");
    cr_assert_str_eq(json_show(out, sizeof out, "0123456789a\xc3\xa9xyz", 16), "0123456789a...");
    cr_assert_str_eq(json_show(out, 8, "\x01\x02", 2), "\\x01...");
}

Test(json, utf8_validation)
{
    cr_assert(utf8_valid("", 0));
    cr_assert(utf8_valid("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 12));
    cr_assert(!utf8_valid("\xc3", 1));
    cr_assert(!utf8_valid("\xed\xa0\x80", 3));
    cr_assert(!utf8_valid("\xc0\x80", 2));
    cr_assert(!utf8_valid("a\xff", 2));
}

/* Random single-byte and splice mutations of valid documents: each parse either
   succeeds or fails with a "JSON: " message; sanitizers watch the memory. */
Test(json, mutations_never_crash)
{
    static const char *seeds[] = {
        "{\"__metadata__\":{\"s2s.format\":\"s2s-model-1\"},\"w\":{\"dtype\":\"F32\","
        "\"shape\":[2,3],\"data_offsets\":[0,24]}}",
        "[1.5e3,-0,\"\\u00e9\\ud83d\\ude00\",true,false,null,{\"a\":[[]]}]",
    };
    static const char alphabet[] = "{}[]\",:\\u0123456789eE.-+ tfnaxd\xc3\xa9\xed\xa0\x80\xff";
    Rng r;
    rng_seed(&r, 7);
    for (int it = 0; it < 4000; it++) {
        const char *seed = seeds[it % 2];
        size_t n = strlen(seed);
        char *t = malloc(n + 8);
        memcpy(t, seed, n);
        int edits = 1 + (int)rng_below(&r, 4);
        for (int k = 0; k < edits; k++) {
            size_t at = rng_below(&r, n);
            switch (rng_below(&r, 3)) {
            case 0:
                t[at] = alphabet[rng_below(&r, sizeof alphabet - 1)];
                break;
            case 1: /* delete */
                memmove(t + at, t + at + 1, n - at - 1);
                n--;
                break;
            default: /* truncate */
                n = at;
            }
            if (n == 0)
                break;
        }
        Json d;
        Err e = {{0}};
        if (parse_n(&d, t, n, &e) != 0)
            cr_assert(strncmp(e.msg, "JSON: ", 6) == 0, "message: %s", e.msg);
        json_free(&d);
        free(t);
    }
}

Test(json, writer_numbers_round_trip)
{
    Rng r;
    rng_seed(&r, 11);
    Buf b = {0};
    for (int i = 0; i < 20000; i++) {
        uint32_t bits = (uint32_t)rng_u64(&r);
        float x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x))
            continue;
        buf_clear(&b);
        buf_json_f32(&b, x);
        float back = strtof(b.data, NULL);
        cr_assert_eq(memcmp(&back, &x, sizeof x), 0, "%s", b.data);
        /* The text is a JSON number too, and its double rounds to the same float. */
        Json d;
        const JsonVal *v = parse_ok(&d, b.data);
        cr_assert_eq((float)v->u.num.d, x, "%s", b.data);
        json_free(&d);

        uint64_t dbits = rng_u64(&r);
        double y;
        memcpy(&y, &dbits, sizeof y);
        if (!isfinite(y))
            continue;
        buf_clear(&b);
        buf_json_f64(&b, y);
        double yback = strtod(b.data, NULL);
        cr_assert_eq(memcmp(&yback, &y, sizeof y), 0, "%s", b.data);
        v = parse_ok(&d, b.data);
        cr_assert_eq(memcmp(&v->u.num.d, &y, sizeof y), 0, "%s", b.data);
        json_free(&d);
    }
    buf_clear(&b);
    buf_json_f32(&b, 0.1f);
    buf_putc(&b, ' ');
    buf_json_f64(&b, 0.1);
    buf_putc(&b, ' ');
    buf_json_f32(&b, 3.0f);
    buf_putc(&b, ' ');
    buf_json_f32(&b, NAN);
    buf_putc(&b, ' ');
    buf_json_f64(&b, -INFINITY);
    buf_putc(&b, ' ');
    buf_json_f32(&b, -0.0f);
    cr_assert_str_eq(b.data, "0.1 0.1 3 null null -0");
    buf_free(&b);
}

/* ---- the writer ---- */

static void expect_written(Buf *b, const char *want)
{
    cr_assert_str_eq(b->data, want);
    Json d;
    parse_ok(&d, b->data); /* and it is JSON */
    json_free(&d);
    buf_free(b);
}

/* The same document in each layout. */
static void write_sample(Buf *b, int layout)
{
    JsonWriter w;
    json_writer_init(&w, b, layout);
    json_open_object(&w, NULL);
    json_put_str(&w, "event", "valid");
    json_put_int(&w, "step", -200);
    json_put_uint(&w, "tokens", 18446744073709551615ULL);
    json_put_double(&w, "loss", "%g", 2.5);
    json_put_double(&w, "rate", "%.6f", 0.01);
    json_put_f32(&w, "dropout", 0.1f);
    json_put_f64(&w, "lr", 1e-3);
    json_put_bool(&w, "best", true);
    json_put_bool(&w, "bad", false);
    json_put_null(&w, "none");
    json_open_array(&w, "sizes");
    json_put_int(&w, NULL, 3);
    json_put_str_or_null(&w, NULL, NULL);
    json_open_array(&w, NULL);
    json_close(&w);
    json_open_object(&w, NULL);
    json_close(&w);
    json_close(&w);
    json_open_object_line(&w, "split");
    json_put_int(&w, "pairs", 2);
    json_put_raw(&w, "config", "{\"a\": 1}");
    json_close(&w);
    json_close(&w);
}

Test(json, writer_line_layout)
{
    Buf b = {0};
    write_sample(&b, JSON_LINE);
    expect_written(&b, "{\"event\": \"valid\", \"step\": -200, \"tokens\": 18446744073709551615, "
                       "\"loss\": 2.5, \"rate\": 0.010000, \"dropout\": 0.1, \"lr\": 0.001, "
                       "\"best\": true, \"bad\": false, \"none\": null, \"sizes\": [3, null, [], {}], "
                       "\"split\": {\"pairs\": 2, \"config\": {\"a\": 1}}}");
}

Test(json, writer_compact_layout)
{
    Buf b = {0};
    write_sample(&b, JSON_COMPACT);
    expect_written(&b, "{\"event\":\"valid\",\"step\":-200,\"tokens\":18446744073709551615,"
                       "\"loss\":2.5,\"rate\":0.010000,\"dropout\":0.1,\"lr\":0.001,"
                       "\"best\":true,\"bad\":false,\"none\":null,\"sizes\":[3,null,[],{}],"
                       "\"split\":{\"pairs\":2,\"config\":{\"a\": 1}}}");
}

Test(json, writer_indented_layout)
{
    Buf b = {0};
    write_sample(&b, 2);
    expect_written(&b, "{\n"
                       "  \"event\": \"valid\",\n"
                       "  \"step\": -200,\n"
                       "  \"tokens\": 18446744073709551615,\n"
                       "  \"loss\": 2.5,\n"
                       "  \"rate\": 0.010000,\n"
                       "  \"dropout\": 0.1,\n"
                       "  \"lr\": 0.001,\n"
                       "  \"best\": true,\n"
                       "  \"bad\": false,\n"
                       "  \"none\": null,\n"
                       "  \"sizes\": [\n"
                       "    3,\n"
                       "    null,\n"
                       "    [],\n"
                       "    {}\n"
                       "  ],\n"
                       "  \"split\": {\"pairs\": 2, \"config\": {\"a\": 1}}\n"
                       "}");
    JsonWriter w;
    json_writer_init(&w, &b, 1);
    json_open_object(&w, NULL);
    json_close(&w);
    expect_written(&b, "{}");
}

Test(json, writer_escapes_strings_and_keys)
{
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_str(&w, "q\"b\\", "say \"hi\" \\ back\\slash");
    json_put_str(&w, "ctl", "a\nb\rc\td\x01\x1f\x7f");
    json_put_str(&w, "utf8", "caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x98\x80");
    json_put_key(&w, "k\0ey", 4);
    json_put_strn(&w, NULL, "n\0ul", 4);
    json_put_strn(&w, "part", "abcdef", 3);
    json_close(&w);
    expect_written(&b, "{\"q\\\"b\\\\\": \"say \\\"hi\\\" \\\\ back\\\\slash\", "
                       "\"ctl\": \"a\\nb\\rc\\td\\u0001\\u001f\x7f\", "
                       "\"utf8\": \"caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x98\x80\", "
                       "\"k\\u0000ey\": \"n\\u0000ul\", \"part\": \"abc\"}");
}

Test(json, writer_top_level_values_and_non_finite)
{
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_put_double(&w, NULL, "%.3f", NAN);
    cr_assert_str_eq(b.data, "null");
    buf_clear(&b);
    json_writer_init(&w, &b, JSON_LINE);
    json_open_array(&w, NULL);
    json_put_double(&w, NULL, "%g", INFINITY);
    json_put_f32(&w, NULL, NAN);
    json_put_double(&w, NULL, "%.2e", 12345.0);
    json_close(&w);
    expect_written(&b, "[null, null, 1.23e+04]");
    json_writer_init(&w, &b, JSON_LINE);
    json_put_str(&w, NULL, "alone");
    expect_written(&b, "\"alone\"");
}

Test(json, writer_misuse_is_a_bug, .signal = SIGABRT)
{
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_int(&w, NULL, 1); /* a value without its key */
}

Test(json, writer_key_in_array_is_a_bug, .signal = SIGABRT)
{
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_array(&w, NULL);
    json_put_int(&w, "k", 1);
}
