/*
 * A small strict JSON parser (RFC 8259) into a read-only tree.
 *
 * - The whole tree lives in one arena: json_free releases it at once.
 * - Objects keep their members in document order; duplicate keys are an error.
 * - Numbers keep their double value (`num`, nearest double; magnitudes beyond the
 *   double range are an error) and, when the exact decimal value is an integer
 *   within int64 ("12", "-0", "1.5e1", "1e3"), that integer exactly (`is_int`, `i`):
 *   safetensors offsets and shapes need all 64 bits.
 * - Strings are decoded to UTF-8 (\uXXXX escapes, surrogate pairs included); they
 *   are NUL-terminated, and `len` counts bytes ("\u0000" gives an embedded NUL).
 * - Rejected: invalid UTF-8 inside strings, unescaped control characters, unpaired
 *   surrogates, trailing characters after the value, nesting of arrays/objects
 *   deeper than JSON_MAX_DEPTH, leading zeros, NaN/Infinity, comments, trailing
 *   commas, a byte order mark. Whitespace is space, tab, LF and CR only.
 * - Any byte sequence is safe input: the text need not be NUL-terminated and is
 *   never read beyond `len`; recursion is bounded by JSON_MAX_DEPTH.
 *
 * Error messages are one line, "JSON: WHAT at byte N", N being the 0-based byte
 * offset in the text; " (end of input)" is appended when the text ended there:
 *   JSON: expected ',' or '}' at byte 120
 *   JSON: expected a value at byte 7 (end of input)
 */
#ifndef S2S_BASE_JSON_H
#define S2S_BASE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define JSON_MAX_DEPTH 64

typedef enum JsonType {
    JSON_NULL,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
} JsonType;

typedef struct JsonVal JsonVal;

/* An object member's key: decoded UTF-8, NUL-terminated, len bytes. */
typedef struct JsonKey {
    const char *s;
    size_t len;
} JsonKey;

struct JsonVal {
    JsonType type;
    bool b;          /* JSON_BOOL */
    bool is_int;     /* JSON_NUMBER: the exact value is an integer held in u.num.i */
    size_t pos;      /* byte offset of the value's first character */
    union {
        struct { double d; int64_t i; } num;                        /* JSON_NUMBER */
        struct { const char *s; size_t len; } str;                  /* JSON_STRING */
        struct { const JsonVal *items; const JsonKey *keys; size_t n; } c;
        /* JSON_ARRAY: n items; JSON_OBJECT: n members, keys[k] names items[k] */
    } u;
};

/* A parsed document: the root and the arena holding every node and string. */
typedef struct Json {
    const JsonVal *root;
    struct JsonArena *arena;
} Json;

/* Parses text[0..len). On error fills e, leaves doc empty (json_free is harmless)
   and returns -1. */
int json_parse(Json *doc, const char *text, size_t len, Err *e);
void json_free(Json *doc);

/* "null", "boolean", "number", "string", "array", "object". */
const char *json_type_name(JsonType t);

/* The member `key` of an object, or NULL (absent, or v is not an object, or NULL). */
const JsonVal *json_get(const JsonVal *obj, const char *key);
/* Number of items of an array or members of an object; 0 for anything else. */
size_t json_len(const JsonVal *v);
/* Item i of an array or value of member i of an object; NULL when out of range. */
const JsonVal *json_at(const JsonVal *v, size_t i);
/* Key of member i of an object; NULL when out of range or not an object. */
const JsonKey *json_key_at(const JsonVal *obj, size_t i);

/*
 * Typed getters: store the value and return 0, or fill e and return -1 when v is
 * NULL or of another type, e.g. "JSON: expected an integer at byte 14, found a string".
 * json_as_int refuses numbers that are not exact integers in int64 range;
 * json_as_str refuses strings with an embedded NUL (len may be NULL).
 */
int json_as_bool(const JsonVal *v, bool *out, Err *e);
int json_as_num(const JsonVal *v, double *out, Err *e);
int json_as_int(const JsonVal *v, int64_t *out, Err *e);
int json_as_str(const JsonVal *v, const char **out, size_t *len, Err *e);

/*
 * Writes s[0..len) into dst (capacity cap >= 8) for an error message: bytes below
 * 0x20, 0x7f and backslash are escaped (\xNN, \\), and text longer than fits ends
 * with "...". Returns dst.
 */
char *json_show(char *dst, size_t cap, const char *s, size_t len);

#endif
