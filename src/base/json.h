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

#include "base/buf.h"
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

/*
 * Writing: a JsonWriter appends one JSON value to a Buf and puts the separators
 * itself. Every call that writes a value takes the member's key first: a key inside
 * an object, NULL for an array item or the top-level value (or after json_put_key).
 *
 *   Buf b = {0};
 *   JsonWriter w;
 *   json_writer_init(&w, &b, JSON_LINE);
 *   json_open_object(&w, NULL);
 *   json_put_str(&w, "event", "valid");
 *   json_put_int(&w, "step", 200);
 *   json_put_double(&w, "loss", "%g", 2.5);
 *   json_open_array(&w, "sizes");
 *   json_put_uint(&w, NULL, 3);
 *   json_put_null(&w, NULL);
 *   json_close(&w);
 *   json_close(&w);
 *       b: {"event": "valid", "step": 200, "loss": 2.5, "sizes": [3, null]}
 *
 * Layouts (the last argument of json_writer_init):
 *   JSON_LINE     one line: {"a": 1, "b": [2, 3]}
 *   JSON_COMPACT  one line, no spaces: {"a":1,"b":[2,3]} (safetensors headers)
 *   N > 0         Python's json.dumps(indent=N): the containers opened with
 *                 json_open_object / json_open_array put each item on a line of its
 *                 own, N spaces deeper than the container's, and the closing bracket
 *                 on a line at the container's depth ("{\n  \"a\": 1\n}"); those
 *                 opened with the _line variants, and all inside them, stay on one
 *                 line as JSON_LINE writes them. Empty containers are {} and [].
 * In JSON_LINE and JSON_COMPACT the _line variants are the same as the others.
 *
 * Strings are escaped as buf_json_str does: \" \\ \n \r \t, other bytes below 0x20
 * as \u00XX, everything else (UTF-8, 0x7f) as it is. Misuse (a value without its key
 * in an object, a key in an array, closing more than was opened, nesting deeper
 * than JSON_MAX_DEPTH) is a bug: it aborts.
 */
#define JSON_LINE 0
#define JSON_COMPACT (-1)

typedef struct JsonWriter {
    Buf *out;
    int layout;                          /* JSON_LINE, JSON_COMPACT or an indent */
    int depth;                           /* containers open */
    bool keyed;                          /* a key is written, its value is next */
    unsigned char open[JSON_MAX_DEPTH];  /* each open container's JSON_W_* flags */
} JsonWriter;

void json_writer_init(JsonWriter *w, Buf *out, int layout);

void json_open_object(JsonWriter *w, const char *key);
void json_open_array(JsonWriter *w, const char *key);
/* Containers kept on one line in an indented layout. */
void json_open_object_line(JsonWriter *w, const char *key);
void json_open_array_line(JsonWriter *w, const char *key);
/* Closes the innermost open container. */
void json_close(JsonWriter *w);

/* Writes a key of n bytes (not NUL-terminated, or holding NULs); the value put next
   takes key NULL. */
void json_put_key(JsonWriter *w, const char *key, size_t n);
void json_put_str(JsonWriter *w, const char *key, const char *s);
void json_put_strn(JsonWriter *w, const char *key, const char *s, size_t n);
/* A NULL string is written as null. */
void json_put_str_or_null(JsonWriter *w, const char *key, const char *s);
void json_put_int(JsonWriter *w, const char *key, long long x);
void json_put_uint(JsonWriter *w, const char *key, unsigned long long x);
/* x printed with fmt, a printf conversion of one double ("%g", "%.4f", "%.3e"...);
   NaN and infinities, which are not JSON, are written as null. */
void json_put_double(JsonWriter *w, const char *key, const char *fmt, double x);
/* The shortest text that reads back to x, as buf_json_f32 and buf_json_f64 write it. */
void json_put_f32(JsonWriter *w, const char *key, float x);
void json_put_f64(JsonWriter *w, const char *key, double x);
void json_put_bool(JsonWriter *w, const char *key, bool b);
void json_put_null(JsonWriter *w, const char *key);
/* text, one complete JSON value formatted elsewhere, appended as it is. */
void json_put_raw(JsonWriter *w, const char *key, const char *text);

#endif
