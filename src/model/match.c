#include "model/match.h"

#include <string.h>

#include "base/buf.h"
#include "base/json.h"

/* A scalar of s2s.config as a message shows it (the configuration holds no arrays or
   objects). */
static void value_text(Buf *o, const JsonVal *v)
{
    if (!v) {
        buf_puts(o, "absent");
        return;
    }
    switch (v->type) {
    case JSON_NULL: buf_puts(o, "null"); break;
    case JSON_BOOL: buf_puts(o, v->b ? "true" : "false"); break;
    case JSON_NUMBER:
        if (v->is_int)
            buf_printf(o, "%lld", (long long)v->u.num.i);
        else
            buf_json_f64(o, v->u.num.d);
        break;
    case JSON_STRING: {
        char s[80];
        buf_puts(o, json_show(s, sizeof s, v->u.str.s, v->u.str.len));
        break;
    }
    default: buf_puts(o, json_type_name(v->type)); break;
    }
}

/* The first key of the two s2s.config objects whose values differ (both are written
   by model_config_json: the same keys in the same order for the same architecture). */
static int config_diff(const ModelFile *a, const char *an, const ModelFile *b, const char *bn,
                       bool text_only, Err *e)
{
    if (!text_only && a->model.cfg.arch != b->model.cfg.arch)
        return err_set(e, "%s is a %s, %s a %s: the architectures differ", bn,
                       model_ops_for(&b->model.cfg)->title, an, model_ops_for(&a->model.cfg)->title);
    Buf ja = {0}, jb = {0};
    model_config_json(&a->model.cfg, &a->text, &ja);
    model_config_json(&b->model.cfg, &b->text, &jb);
    Json da = {0}, db = {0};
    int rc = 0;
    if (json_parse(&da, ja.data, ja.len, e) != 0 || json_parse(&db, jb.data, jb.len, e) != 0) {
        rc = -1;
        goto out;
    }
    static const char *const text_keys[] = {"direction", "src_lang", "tgt_lang", "keep_case", NULL};
    const JsonVal *oa = da.root, *ob = db.root;
    for (size_t i = 0; i < json_len(oa) + json_len(ob) && rc == 0; i++) {
        /* every key of a, then those of b that a lacks */
        bool from_a = i < json_len(oa);
        const JsonKey *k = from_a ? json_key_at(oa, i) : json_key_at(ob, i - json_len(oa));
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)k->len, k->s);
        if (text_only) {
            bool wanted = false;
            for (int t = 0; text_keys[t]; t++)
                wanted |= strcmp(text_keys[t], key) == 0;
            if (!wanted)
                continue;
        }
        const JsonVal *va = json_get(oa, key), *vb = json_get(ob, key);
        if (!from_a && va)
            continue;
        Buf sa = {0}, sb = {0};
        value_text(&sa, va);
        value_text(&sb, vb);
        if (!va || !vb || strcmp(sa.data, sb.data) != 0)
            rc = err_set(e, "%s: '%s' is %s, %s has %s", bn, key, sb.data, an, sa.data);
        buf_free(&sa);
        buf_free(&sb);
    }
out:
    json_free(&da);
    json_free(&db);
    buf_free(&ja);
    buf_free(&jb);
    return rc;
}

static int vocab_diff(const Vocab *a, const char *an, const Vocab *b, const char *bn, const char *which,
                      Err *e)
{
    size_t na = vocab_size(a), nb = vocab_size(b);
    size_t n = na < nb ? na : nb;
    for (size_t i = 0; i < n; i++) {
        const char *ta = vocab_token(a, (int32_t)i), *tb = vocab_token(b, (int32_t)i);
        if (strcmp(ta, tb) != 0) {
            char sa[64], sb[64];
            return err_set(e, "%s: %s: id %zu is '%s', %s has '%s'", bn, which, i, json_show(sb, sizeof sb, tb, strlen(tb)),
                           an, json_show(sa, sizeof sa, ta, strlen(ta)));
        }
    }
    if (na != nb)
        return err_set(e, "%s: %s has %zu tokens, %s has %zu", bn, which, nb, an, na);
    return 0;
}

/* Both sides' subword codes: the same merges, or words on both. */
static int bpe_diff(const ModelFile *a, const char *an, const ModelFile *b, const char *bn, Err *e)
{
    static const char *const key[2] = {"s2s.bpe.src", "s2s.bpe.tgt"};
    for (int s = 0; s < 2; s++) {
        if (!a->bpe[s] && !b->bpe[s])
            continue;
        if (!a->bpe[s] || !b->bpe[s])
            return err_set(e, "%s: %s: %s, %s has %s", bn, key[s], b->bpe[s] ? "subword units" : "words", an,
                           a->bpe[s] ? "subword units" : "words");
        Buf x = {0}, y = {0};
        bpe_format(a->bpe[s], &x);
        bpe_format(b->bpe[s], &y);
        bool same = x.len == y.len && memcmp(x.data, y.data, x.len) == 0;
        buf_free(&x);
        buf_free(&y);
        if (!same)
            return err_set(e, "%s: %s: other merges than %s's", bn, key[s], an);
    }
    return 0;
}

int model_match_for_average(const ModelFile *a, const char *an, const ModelFile *b, const char *bn, Err *e)
{
    if (config_diff(a, an, b, bn, false, e) != 0)
        return -1;
    if (vocab_diff(a->src, an, b->src, bn, "s2s.vocab.src", e) != 0 ||
        vocab_diff(a->tgt, an, b->tgt, bn, "s2s.vocab.tgt", e) != 0)
        return -1;
    return bpe_diff(a, an, b, bn, e);
}

int model_match_for_ensemble(const ModelFile *a, const char *an, const ModelFile *b, const char *bn, Err *e)
{
    if (config_diff(a, an, b, bn, true, e) != 0)
        return -1;
    if (vocab_diff(a->src, an, b->src, bn, "s2s.vocab.src", e) != 0 ||
        vocab_diff(a->tgt, an, b->tgt, bn, "s2s.vocab.tgt", e) != 0)
        return -1;
    return bpe_diff(a, an, b, bn, e);
}
