#include "base/json.h"

#include "base/utf8.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------------- */

typedef struct ArenaChunk {
    struct ArenaChunk *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
} ArenaChunk;

struct JsonArena {
    ArenaChunk *head;
};

enum { ARENA_CHUNK = 64 * 1024 };

static void *arena_alloc(struct JsonArena *a, size_t n)
{
    const size_t al = alignof(max_align_t);
    n = n ? (n + al - 1) / al * al : al;
    ArenaChunk *c = a->head;
    if (n > ARENA_CHUNK / 4) {
        /* A block of its own, behind the current chunk whose free space stays usable. */
        ArenaChunk *big = xmalloc(sizeof *big + n);
        big->used = big->cap = n;
        if (c) {
            big->next = c->next;
            c->next = big;
        } else {
            big->next = NULL;
            a->head = big;
        }
        return big->data;
    }
    if (!c || c->cap - c->used < n) {
        c = xmalloc(sizeof *c + ARENA_CHUNK);
        c->used = 0;
        c->cap = ARENA_CHUNK;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

static void arena_free(struct JsonArena *a)
{
    if (!a)
        return;
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}

/* ---- parser ---------------------------------------------------------------- */

typedef struct ScratchKey {
    const char *s;
    size_t len;
    size_t pos;
} ScratchKey;

typedef struct Parser {
    const unsigned char *s;
    size_t len, pos;
    struct JsonArena *arena;
    JsonVal *vals;   /* children of the open containers, innermost last */
    size_t nvals, capvals;
    ScratchKey *keys; /* keys of the open objects' members, innermost last */
    size_t nkeys, capkeys;
    Err *e;
} Parser;

static int fail_at(Parser *p, size_t pos, const char *fmt, ...) S2S_PRINTF(3, 4);
static int fail_at(Parser *p, size_t pos, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(p->e, "JSON: %s at byte %zu%s", what, pos,
                   pos >= p->len ? " (end of input)" : "");
}

static void skip_ws(Parser *p)
{
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static int peek(const Parser *p)
{
    return p->pos < p->len ? p->s[p->pos] : -1;
}

static void push_val(Parser *p, const JsonVal *v)
{
    if (p->nvals == p->capvals) {
        p->capvals = p->capvals ? p->capvals * 2 : 64;
        p->vals = xrealloc_array(p->vals, p->capvals, sizeof *p->vals);
    }
    p->vals[p->nvals++] = *v;
}

static void push_key(Parser *p, const char *s, size_t len, size_t pos)
{
    if (p->nkeys == p->capkeys) {
        p->capkeys = p->capkeys ? p->capkeys * 2 : 32;
        p->keys = xrealloc_array(p->keys, p->capkeys, sizeof *p->keys);
    }
    p->keys[p->nkeys++] = (ScratchKey){s, len, pos};
}

static int hex4(const unsigned char *s, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = s[k];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(unsigned char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parses the string starting at the '"' under p->pos into the arena. */
static int parse_string(Parser *p, const char **out, size_t *out_len)
{
    size_t start = p->pos;
    size_t end = start + 1;
    /* Find the closing quote first: the decoded text is never longer than the raw. */
    while (end < p->len && p->s[end] != '"')
        end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->len)
        return fail_at(p, start, "unterminated string");
    unsigned char *o = arena_alloc(p->arena, end - start);
    size_t n = 0;
    size_t i = start + 1;
    while (i < end) {
        unsigned char c = p->s[i];
        if (c < 0x20)
            return fail_at(p, i, "control character in string");
        if (c >= 0x80) {
            size_t k = utf8_seq(p->s + i, end - i);
            if (!k)
                return fail_at(p, i, "invalid UTF-8 in string");
            memcpy(o + n, p->s + i, k);
            n += k;
            i += k;
            continue;
        }
        if (c != '\\') {
            o[n++] = c;
            i++;
            continue;
        }
        /* An escape; the scan above guarantees a byte after the backslash. */
        unsigned char x = p->s[i + 1];
        const char *simple = strchr("\"\\/bfnrt", x);
        if (x && simple) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            o[n++] = (unsigned char)map[simple - "\"\\/bfnrt"];
            i += 2;
            continue;
        }
        if (x != 'u')
            return fail_at(p, i, "invalid escape in string");
        unsigned cp;
        if (end - i < 6 || hex4(p->s + i + 2, &cp) != 0)
            return fail_at(p, i, "expected 4 hex digits after \\u");
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return fail_at(p, i, "unpaired surrogate \\u%04X in string", cp);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (end - i < 12 || p->s[i + 6] != '\\' || p->s[i + 7] != 'u' ||
                hex4(p->s + i + 8, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
                return fail_at(p, i, "unpaired surrogate \\u%04X in string", cp);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        }
        n += put_utf8(o + n, cp);
        i += 6;
    }
    o[n] = '\0';
    *out = (const char *)o;
    *out_len = n;
    p->pos = end + 1;
    return 0;
}


static bool is_digit(int c) { return c >= '0' && c <= '9'; }

/* The exact integer value of the number text, when it is one within int64.
   int_part/frac_part are digit runs, exp10 the (saturated) decimal exponent. */
static bool exact_int(const unsigned char *ip, size_t ni, const unsigned char *fp, size_t nf,
                      int64_t exp10, bool neg, int64_t *out)
{
    size_t nd = ni + nf;
#define DIGIT(k) ((k) < ni ? ip[k] : fp[(k) - ni])
    size_t first = 0;
    while (first < nd && DIGIT(first) == '0')
        first++;
    if (first == nd) {
        *out = 0;
        return true;
    }
    size_t last = nd - 1;
    while (DIGIT(last) == '0')
        last--;
    /* value = digits[first..last] * 10^x */
    int64_t x = exp10 - (int64_t)nf + (int64_t)(nd - 1 - last);
    int64_t sig = (int64_t)(last - first + 1);
    if (x < 0 || sig + x > 19)
        return false;
    uint64_t u = 0;
    for (size_t k = first; k <= last; k++)
        u = u * 10 + (uint64_t)(DIGIT(k) - '0');
    for (int64_t k = 0; k < x; k++)
        u *= 10;
#undef DIGIT
    if (neg) {
        if (u > (uint64_t)INT64_MAX + 1)
            return false;
        *out = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    } else {
        if (u > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)u;
    }
    return true;
}

static int parse_number(Parser *p, JsonVal *v)
{
    size_t start = p->pos;
    bool neg = false;
    if (peek(p) == '-') {
        neg = true;
        p->pos++;
    }
    size_t ip = p->pos;
    if (peek(p) == '0') {
        p->pos++;
    } else if (is_digit(peek(p))) {
        while (is_digit(peek(p)))
            p->pos++;
    } else {
        return fail_at(p, p->pos, "expected a digit");
    }
    size_t ni = p->pos - ip;
    size_t fp = p->pos, nf = 0;
    if (peek(p) == '.') {
        p->pos++;
        fp = p->pos;
        if (!is_digit(peek(p)))
            return fail_at(p, p->pos, "expected a digit");
        while (is_digit(peek(p)))
            p->pos++;
        nf = p->pos - fp;
    }
    int64_t exp10 = 0;
    if (peek(p) == 'e' || peek(p) == 'E') {
        p->pos++;
        bool eneg = false;
        if (peek(p) == '+' || peek(p) == '-') {
            eneg = peek(p) == '-';
            p->pos++;
        }
        if (!is_digit(peek(p)))
            return fail_at(p, p->pos, "expected a digit");
        while (is_digit(peek(p))) {
            if (exp10 < 1000000000)
                exp10 = exp10 * 10 + (peek(p) - '0');
            p->pos++;
        }
        if (eneg)
            exp10 = -exp10;
    }
    if (is_digit(peek(p)))
        return fail_at(p, p->pos, "leading zeros are not allowed in numbers");
    size_t n = p->pos - start;
    char small[64];
    char *tmp = n < sizeof small ? small : xmalloc(n + 1);
    memcpy(tmp, p->s + start, n);
    tmp[n] = '\0';
    /* in the "C" locale, so that numbers parse the same whatever setlocale() chose */
    double d = strtod_l(tmp, NULL, buf_c_locale());
    if (tmp != small)
        free(tmp);
    if (isinf(d))
        return fail_at(p, start, "number out of range");
    v->type = JSON_NUMBER;
    v->u.num.d = d;
    v->is_int = exact_int(p->s + ip, ni, p->s + fp, nf, exp10, neg, &v->u.num.i);
    if (!v->is_int)
        v->u.num.i = 0;
    return 0;
}

static bool keys_equal(const ScratchKey *a, const ScratchKey *b)
{
    return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

static uint64_t key_hash(const ScratchKey *k)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < k->len; i++)
        h = (h ^ (unsigned char)k->s[i]) * 0x100000001b3ULL;
    return h;
}

/* Index (>= 1) of the first key that repeats an earlier one, or 0. */
static size_t find_duplicate(const ScratchKey *k, size_t n)
{
    if (n <= 8) {
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (keys_equal(&k[i], &k[j]))
                    return j;
        return 0;
    }
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = xmalloc_array(cap, sizeof *slot);
    for (size_t i = 0; i < cap; i++)
        slot[i] = SIZE_MAX;
    size_t dup = 0;
    for (size_t j = 0; j < n && !dup; j++) {
        size_t h = (size_t)key_hash(&k[j]) & (cap - 1);
        while (slot[h] != SIZE_MAX) {
            if (keys_equal(&k[slot[h]], &k[j])) {
                dup = j;
                break;
            }
            h = (h + 1) & (cap - 1);
        }
        if (!dup)
            slot[h] = j;
    }
    free(slot);
    return dup;
}

static int parse_value(Parser *p, JsonVal *v, int depth);

/* Moves the last n scratch values (and keys, for objects) into the arena. */
static void close_container(Parser *p, JsonVal *v, size_t base, size_t kbase, bool object)
{
    size_t n = p->nvals - base;
    v->u.c.n = n;
    v->u.c.items = NULL;
    v->u.c.keys = NULL;
    if (n) {
        JsonVal *items = arena_alloc(p->arena, n * sizeof *items);
        memcpy(items, p->vals + base, n * sizeof *items);
        v->u.c.items = items;
        if (object) {
            JsonKey *keys = arena_alloc(p->arena, n * sizeof *keys);
            for (size_t k = 0; k < n; k++)
                keys[k] = (JsonKey){p->keys[kbase + k].s, p->keys[kbase + k].len};
            v->u.c.keys = keys;
        }
    }
    p->nvals = base;
    p->nkeys = kbase;
}

/* After an item of a container closed by `close`: 1 when ',' says another follows
   (skipped, with the spaces after it), 0 at the closing character (skipped), else an
   error (-1). */
static int next_item(Parser *p, int close)
{
    skip_ws(p);
    int c = peek(p);
    if (c == ',') {
        p->pos++;
        skip_ws(p);
        return 1;
    }
    if (c == close) {
        p->pos++;
        return 0;
    }
    return fail_at(p, p->pos, "expected ',' or '%c'", close);
}

static int parse_array(Parser *p, JsonVal *v, int depth)
{
    size_t base = p->nvals;
    v->type = JSON_ARRAY;
    p->pos++; /* '[' */
    skip_ws(p);
    if (peek(p) == ']') {
        p->pos++;
        close_container(p, v, base, p->nkeys, false);
        return 0;
    }
    for (;;) {
        JsonVal item;
        if (parse_value(p, &item, depth) != 0)
            return -1;
        push_val(p, &item);
        int more = next_item(p, ']');
        if (more < 0)
            return -1;
        if (!more)
            break;
    }
    close_container(p, v, base, p->nkeys, false);
    return 0;
}

static int parse_object(Parser *p, JsonVal *v, int depth)
{
    size_t base = p->nvals, kbase = p->nkeys;
    v->type = JSON_OBJECT;
    p->pos++; /* '{' */
    skip_ws(p);
    if (peek(p) == '}') {
        p->pos++;
        close_container(p, v, base, kbase, true);
        return 0;
    }
    for (;;) {
        if (peek(p) != '"')
            return fail_at(p, p->pos, p->nvals == base ? "expected a string key or '}'"
                                                       : "expected a string key");
        size_t kpos = p->pos;
        const char *ks;
        size_t klen;
        if (parse_string(p, &ks, &klen) != 0)
            return -1;
        skip_ws(p);
        if (peek(p) != ':')
            return fail_at(p, p->pos, "expected ':'");
        p->pos++;
        skip_ws(p);
        JsonVal item;
        if (parse_value(p, &item, depth) != 0)
            return -1;
        push_key(p, ks, klen, kpos);
        push_val(p, &item);
        int more = next_item(p, '}');
        if (more < 0)
            return -1;
        if (!more)
            break;
    }
    size_t dup = find_duplicate(p->keys + kbase, p->nkeys - kbase);
    if (dup) {
        const ScratchKey *k = &p->keys[kbase + dup];
        char shown[80];
        return fail_at(p, k->pos, "duplicate key '%s'", json_show(shown, sizeof shown, k->s, k->len));
    }
    close_container(p, v, base, kbase, true);
    return 0;
}

static bool match_word(const Parser *p, const char *w)
{
    size_t n = strlen(w);
    return p->len - p->pos >= n && memcmp(p->s + p->pos, w, n) == 0;
}

static int parse_value(Parser *p, JsonVal *v, int depth)
{
    memset(v, 0, sizeof *v);
    v->pos = p->pos;
    int c = peek(p);
    switch (c) {
    case '{':
    case '[':
        if (depth >= JSON_MAX_DEPTH)
            return fail_at(p, p->pos, "nesting deeper than %d", JSON_MAX_DEPTH);
        return c == '{' ? parse_object(p, v, depth + 1) : parse_array(p, v, depth + 1);
    case '"':
        v->type = JSON_STRING;
        return parse_string(p, &v->u.str.s, &v->u.str.len);
    case 't':
    case 'f':
    case 'n': {
        const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
        if (!match_word(p, w))
            break;
        p->pos += strlen(w);
        v->type = c == 'n' ? JSON_NULL : JSON_BOOL;
        v->b = c == 't';
        return 0;
    }
    default:
        if (c == '-' || is_digit(c))
            return parse_number(p, v);
    }
    return fail_at(p, p->pos, "expected a value");
}

int json_parse(Json *doc, const char *text, size_t len, Err *e)
{
    doc->root = NULL;
    doc->arena = NULL;
    Parser p = {.s = (const unsigned char *)text, .len = len, .e = e};
    p.arena = xcalloc(1, sizeof *p.arena);
    JsonVal *root = arena_alloc(p.arena, sizeof *root);
    skip_ws(&p);
    int rc = parse_value(&p, root, 0);
    if (rc == 0) {
        skip_ws(&p);
        if (p.pos < p.len)
            rc = fail_at(&p, p.pos, "expected end of input");
    }
    free(p.vals);
    free(p.keys);
    if (rc != 0) {
        arena_free(p.arena);
        return -1;
    }
    doc->root = root;
    doc->arena = p.arena;
    return 0;
}

void json_free(Json *doc)
{
    arena_free(doc->arena);
    doc->arena = NULL;
    doc->root = NULL;
}

/* ---- lookup ---------------------------------------------------------------- */

const char *json_type_name(JsonType t)
{
    switch (t) {
    case JSON_NULL: return "null";
    case JSON_BOOL: return "boolean";
    case JSON_NUMBER: return "number";
    case JSON_STRING: return "string";
    case JSON_ARRAY: return "array";
    case JSON_OBJECT: return "object";
    }
    return "?";
}

const JsonVal *json_get(const JsonVal *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJECT)
        return NULL;
    size_t n = strlen(key);
    for (size_t i = 0; i < obj->u.c.n; i++) {
        const JsonKey *k = &obj->u.c.keys[i];
        if (k->len == n && memcmp(k->s, key, n) == 0)
            return &obj->u.c.items[i];
    }
    return NULL;
}

size_t json_len(const JsonVal *v)
{
    return v && (v->type == JSON_ARRAY || v->type == JSON_OBJECT) ? v->u.c.n : 0;
}

const JsonVal *json_at(const JsonVal *v, size_t i)
{
    return i < json_len(v) ? &v->u.c.items[i] : NULL;
}

const JsonKey *json_key_at(const JsonVal *obj, size_t i)
{
    return obj && obj->type == JSON_OBJECT && i < obj->u.c.n ? &obj->u.c.keys[i] : NULL;
}

static int wrong_type(const JsonVal *v, const char *want, Err *e)
{
    if (!v)
        return err_set(e, "JSON: expected %s, found nothing", want);
    const char *art = v->type == JSON_ARRAY || v->type == JSON_OBJECT ? "an " : "a ";
    if (v->type == JSON_NULL)
        art = "";
    return err_set(e, "JSON: expected %s at byte %zu, found %s%s", want, v->pos, art,
                   json_type_name(v->type));
}

int json_as_bool(const JsonVal *v, bool *out, Err *e)
{
    if (!v || v->type != JSON_BOOL)
        return wrong_type(v, "a boolean", e);
    *out = v->b;
    return 0;
}

int json_as_num(const JsonVal *v, double *out, Err *e)
{
    if (!v || v->type != JSON_NUMBER)
        return wrong_type(v, "a number", e);
    *out = v->u.num.d;
    return 0;
}

int json_as_int(const JsonVal *v, int64_t *out, Err *e)
{
    if (!v || v->type != JSON_NUMBER)
        return wrong_type(v, "an integer", e);
    if (!v->is_int)
        return err_set(e, "JSON: expected an integer at byte %zu, found a number that is not "
                          "an integer in the 64-bit range", v->pos);
    *out = v->u.num.i;
    return 0;
}

int json_as_str(const JsonVal *v, const char **out, size_t *len, Err *e)
{
    if (!v || v->type != JSON_STRING)
        return wrong_type(v, "a string", e);
    if (memchr(v->u.str.s, '\0', v->u.str.len))
        return err_set(e, "JSON: string at byte %zu contains a NUL character", v->pos);
    *out = v->u.str.s;
    if (len)
        *len = v->u.str.len;
    return 0;
}

char *json_show(char *dst, size_t cap, const char *s, size_t len)
{
    CHECK(cap >= 8);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char tmp[8];
        size_t k;
        if (c < 0x20 || c == 0x7f)
            k = (size_t)snprintf(tmp, sizeof tmp, "\\x%02x", c);
        else if (c == '\\')
            k = (size_t)snprintf(tmp, sizeof tmp, "\\\\");
        else {
            tmp[0] = (char)c;
            k = 1;
        }
        if (o + k + 4 > cap) {
            /* Do not cut a UTF-8 sequence: back off to the start of the character. */
            while (i > 0 && o > 0 && ((unsigned char)s[i] & 0xC0) == 0x80 &&
                   ((unsigned char)s[i - 1] & 0x80)) {
                i--;
                o--;
            }
            memcpy(dst + o, "...", 4);
            return dst;
        }
        memcpy(dst + o, tmp, k);
        o += k;
    }
    dst[o] = '\0';
    return dst;
}

/* ---- writing --------------------------------------------------------------- */

enum {
    JSON_W_OBJECT = 1,    /* an object, else an array */
    JSON_W_LINES = 2,     /* one item a line */
    JSON_W_NONEMPTY = 4,  /* an item is written */
};

void json_writer_init(JsonWriter *w, Buf *out, int layout)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->layout = layout;
}

static void new_line(JsonWriter *w, int depth)
{
    size_t n = (size_t)w->layout * (size_t)depth;
    buf_reserve(w->out, n + 1);
    buf_putc(w->out, '\n');
    memset(w->out->data + w->out->len, ' ', n);
    w->out->len += n;
    w->out->data[w->out->len] = '\0';
}

/* What comes before an item of the innermost container: the separator and, one item
   a line, the line break and the indent. */
static void item_start(JsonWriter *w)
{
    unsigned char *c = &w->open[w->depth - 1];
    if (*c & JSON_W_NONEMPTY)
        buf_puts(w->out, w->layout == JSON_COMPACT || (*c & JSON_W_LINES) ? "," : ", ");
    *c |= JSON_W_NONEMPTY;
    if (*c & JSON_W_LINES)
        new_line(w, w->depth);
}

void json_put_key(JsonWriter *w, const char *key, size_t n)
{
    CHECK(w->depth > 0 && (w->open[w->depth - 1] & JSON_W_OBJECT) && !w->keyed);
    item_start(w);
    buf_json_str(w->out, key, n);
    buf_puts(w->out, w->layout == JSON_COMPACT ? ":" : ": ");
    w->keyed = true;
}

/* Everything before a value: its key, or the separator of an array item. */
static void value_start(JsonWriter *w, const char *key)
{
    if (key) {
        json_put_key(w, key, strlen(key));
    } else if (w->depth > 0) {
        bool in_object = w->open[w->depth - 1] & JSON_W_OBJECT;
        CHECK(in_object == w->keyed);
        if (!in_object)
            item_start(w);
    }
    w->keyed = false;
}

static void open_container(JsonWriter *w, const char *key, bool object, bool lines)
{
    CHECK(w->depth < JSON_MAX_DEPTH);
    value_start(w, key);
    buf_putc(w->out, object ? '{' : '[');
    w->open[w->depth++] = (unsigned char)((object ? JSON_W_OBJECT : 0) |
                                          (lines && w->layout > 0 ? JSON_W_LINES : 0));
}

void json_open_object(JsonWriter *w, const char *key) { open_container(w, key, true, true); }
void json_open_array(JsonWriter *w, const char *key) { open_container(w, key, false, true); }
void json_open_object_line(JsonWriter *w, const char *key) { open_container(w, key, true, false); }
void json_open_array_line(JsonWriter *w, const char *key) { open_container(w, key, false, false); }

void json_close(JsonWriter *w)
{
    CHECK(w->depth > 0 && !w->keyed);
    unsigned char c = w->open[--w->depth];
    if ((c & JSON_W_LINES) && (c & JSON_W_NONEMPTY))
        new_line(w, w->depth);
    buf_putc(w->out, (c & JSON_W_OBJECT) ? '}' : ']');
}

void json_put_strn(JsonWriter *w, const char *key, const char *s, size_t n)
{
    value_start(w, key);
    buf_json_str(w->out, s, n);
}

void json_put_str(JsonWriter *w, const char *key, const char *s) { json_put_strn(w, key, s, strlen(s)); }

void json_put_str_or_null(JsonWriter *w, const char *key, const char *s)
{
    if (s)
        json_put_str(w, key, s);
    else
        json_put_null(w, key);
}

void json_put_raw(JsonWriter *w, const char *key, const char *text)
{
    value_start(w, key);
    buf_puts(w->out, text);
}

void json_put_int(JsonWriter *w, const char *key, long long x)
{
    value_start(w, key);
    buf_printf(w->out, "%lld", x);
}

void json_put_uint(JsonWriter *w, const char *key, unsigned long long x)
{
    value_start(w, key);
    buf_printf(w->out, "%llu", x);
}

void json_put_double(JsonWriter *w, const char *key, const char *fmt, double x)
{
    value_start(w, key);
    if (isfinite(x))
        buf_printf(w->out, fmt, x);
    else
        buf_puts(w->out, "null");
}

void json_put_f32(JsonWriter *w, const char *key, float x)
{
    value_start(w, key);
    buf_json_f32(w->out, x);
}

void json_put_f64(JsonWriter *w, const char *key, double x)
{
    value_start(w, key);
    buf_json_f64(w->out, x);
}

void json_put_bool(JsonWriter *w, const char *key, bool b) { json_put_raw(w, key, b ? "true" : "false"); }

void json_put_null(JsonWriter *w, const char *key) { json_put_raw(w, key, "null"); }
