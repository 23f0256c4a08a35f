/* s2s info: what a model file holds, through the library's interface (include/s2s.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "base/opt.h"
#include "cmd_search.h"
#include "commands.h"
#include "s2s.h"

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--tensors", .kind = OPT_TRUE, .off = 0,
     .help = "also list every tensor: name, shape and number of parameters"},
    OPT_HELP_ROW,
    {0},
};

/* The options: the one flag, --tensors. */
static const OptTable table = {
    .cmd = "info", .rows = rows, .size = sizeof(bool), .what = "MODEL", .col = 15,
    .head = "usage: s2s info MODEL [--tensors]\n"
            "\n"
            "Prints what the model file MODEL holds: its size, translation direction and\n"
            "tokenizer settings, vocabulary sizes, the number of parameters, every key of\n"
            "its configuration and the training summary (s2s.history). The file is fully\n"
            "checked first (structure, checksum, configuration, vocabularies, tensors).\n"
            "\n",
    .foot = "",
};

/* The shortest %g form that reads back as the same float (f32) or double, in s[40]. */
static const char *number_text(char *s, double d, bool f32)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(s, 40, "%.*g", p, d);
        double back = strtod(s, NULL);
        if (f32 ? (float)back == (float)d : back == d)
            break;
    }
    return s;
}

static bool plain_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return n > 0;
}

/* v as JSON on one line, numbers as number_text writes them. */
static void put_json_value(JsonWriter *w, const JsonVal *v, bool f32)
{
    char num[40];
    switch (v->type) {
    case JSON_NULL: json_put_null(w, NULL); break;
    case JSON_BOOL: json_put_bool(w, NULL, v->b); break;
    case JSON_NUMBER:
        if (v->is_int)
            json_put_int(w, NULL, (long long)v->u.num.i);
        else
            json_put_raw(w, NULL, number_text(num, v->u.num.d, f32));
        break;
    case JSON_STRING: json_put_strn(w, NULL, v->u.str.s, v->u.str.len); break;
    case JSON_ARRAY:
    case JSON_OBJECT: {
        bool obj = v->type == JSON_OBJECT;
        if (obj)
            json_open_object(w, NULL);
        else
            json_open_array(w, NULL);
        for (size_t i = 0; i < json_len(v); i++) {
            if (obj)
                json_put_key(w, json_key_at(v, i)->s, json_key_at(v, i)->len);
            put_json_value(w, json_at(v, i), f32);
        }
        json_close(w);
        break;
    }
    }
}

/* A value on one line: strings bare when printable, anything else as JSON. */
static void put_inline(Buf *o, const JsonVal *v, bool f32)
{
    if (v->type == JSON_STRING && plain_text(v->u.str.s, v->u.str.len)) {
        buf_append(o, v->u.str.s, v->u.str.len);
        return;
    }
    JsonWriter w;
    json_writer_init(&w, o, JSON_LINE);
    put_json_value(&w, v, f32);
}

/* The members of an object, one "key: value" a line; non-empty objects nest below
   their key, two spaces deeper. */
static void put_members(Buf *o, const JsonVal *obj, int indent, bool f32)
{
    for (size_t i = 0; i < json_len(obj); i++) {
        const JsonKey *k = json_key_at(obj, i);
        const JsonVal *v = json_at(obj, i);
        buf_printf(o, "%*s", indent, "");
        if (plain_text(k->s, k->len) && !memchr(k->s, ':', k->len))
            buf_append(o, k->s, k->len);
        else
            buf_json_str(o, k->s, k->len);
        if (v->type == JSON_OBJECT && json_len(v) > 0) {
            buf_puts(o, ":\n");
            put_members(o, v, indent + 2, f32);
        } else {
            buf_puts(o, ": ");
            put_inline(o, v, f32);
            buf_putc(o, '\n');
        }
    }
}

int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    bool tensors = false;
    int seen[sizeof rows / sizeof *rows];
    opt_parse(&table, &tensors, argc, argv, seen, &path, 1);
    if (!path)
        die_usage("info: missing MODEL argument (see 's2s info --help')");

    s2s_translator *tr = cmd_load_as_stored(path);
    struct stat st;
    if (stat(path, &st) != 0)
        die("%s: %s", path, strerror(errno));

    const s2s_model_info *m = s2s_translator_info(tr);
    Buf o = {0};
    buf_printf(&o, "file: %s\nsize: %lld bytes\n", path, (long long)st.st_size);
    buf_printf(&o, "direction: %s (%s to %s)\nkeep_case: %s\n", m->direction, m->source_lang, m->target_lang,
               m->keep_case ? "true" : "false");
    buf_printf(&o, "vocabulary: source %lld, target %lld\n", m->source_vocab, m->target_vocab);
    if (m->source_merges || m->target_merges) {
        buf_puts(&o, "bpe:");
        for (int s = 0; s < 2; s++) {
            long long merges = s ? m->target_merges : m->source_merges;
            buf_puts(&o, s ? ", target " : " source ");
            if (merges)
                buf_printf(&o, "%lld merges", merges);
            else
                buf_puts(&o, "words");
        }
        buf_putc(&o, '\n');
    }
    buf_printf(&o, "parameters: %lld (%d tensors)\n", m->parameters, m->tensors);

    /* Every key of s2s.config, from the same writer the file uses. */
    Err e;
    Json doc;
    if (json_parse(&doc, m->config_json, strlen(m->config_json), &e) != 0)
        BUG("the library wrote an invalid s2s.config: %s", e.msg);
    buf_puts(&o, "config:\n");
    put_members(&o, doc.root, 2, true);
    json_free(&doc);

    /* s2s.history was checked when the file was loaded. */
    if (json_parse(&doc, m->history_json, strlen(m->history_json), &e) != 0)
        BUG("s2s.history was checked on load: %s", e.msg);
    if (doc.root->type == JSON_OBJECT && json_len(doc.root) > 0) {
        buf_puts(&o, "history:\n");
        put_members(&o, doc.root, 2, false);
    } else {
        buf_puts(&o, "history: ");
        put_inline(&o, doc.root, false);
        buf_putc(&o, '\n');
    }
    json_free(&doc);

    if (tensors) {
        buf_puts(&o, "tensors:\n");
        s2s_tensor t;
        for (int i = 0; s2s_translator_tensor(tr, i, &t) == 0; i++) {
            char shape[48];
            if (t.ndim == 1)
                snprintf(shape, sizeof shape, "[%d]", t.shape[0]);
            else
                snprintf(shape, sizeof shape, "[%d, %d]", t.shape[0], t.shape[1]);
            buf_printf(&o, "  %-32s %-14s %lld\n", t.name, shape, t.size);
        }
    }

    if (fwrite(o.data, 1, o.len, stdout) != o.len || fflush(stdout) != 0)
        die("cannot write to stdout: %s", strerror(errno));
    buf_free(&o);
    s2s_translator_free(tr);
    return 0;
}
