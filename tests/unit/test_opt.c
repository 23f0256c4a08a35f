/* base/opt's option tables: parsing into a struct, the help, saved options in JSON;
   and the consistency of the table of `s2s train`. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "base/opt.h"
#include "train/options.h"

typedef struct Toy {
    int n;
    double x;
    bool on;
    int color;
    const char *name;
} Toy;

static const char *const colors[] = {"red", "green", "blue"};

static const OptRow toy_rows[] = {
    {.kind = OPT_SECTION, .help = "toy:"},
    {.name = "--n", .kind = OPT_INT, .off = offsetof(Toy, n), .min = 0, .max = 9, .arg = "N",
     .help = "a count (default {})", .key = "n"},
    {.name = "--x", .kind = OPT_DOUBLE, .off = offsetof(Toy, x), .fmin = 0, .fmax = 1, .arg = "X",
     .help = "a rate (default {}, n {--n})\nsecond line", .key = "x", .flags = OPT_KEY_OPTIONAL},
    {.name = "--on", .kind = OPT_TRUE, .off = offsetof(Toy, on), .help = "switch", .key = "on"},
    {.name = "--color", .kind = OPT_ENUM, .off = offsetof(Toy, color), .names = colors, .min = 0, .max = 2,
     .arg = "red|green|blue", .help = "a colour", .key = "color"},
    {.name = "--name", .alias = "-n", .kind = OPT_STR, .off = offsetof(Toy, name)},
    {0},
};

static const OptTable toy = {.cmd = "toy", .rows = toy_rows, .head = "usage: toy\n", .foot = "end\n",
                             .size = sizeof(Toy), .what = "FILE"};

Test(opt, parses_into_the_fields_and_records_what_was_given)
{
    Toy t = {.n = 3, .x = 0.5};
    char *argv[] = {"toy", "--n=4", "a", "--color", "blue", "-n", "bob", "--on", NULL};
    int seen[6];
    const char *pos[2];
    int npos = opt_parse(&toy, &t, 8, argv, seen, pos, 2);
    cr_assert_eq(npos, 1);
    cr_expect_str_eq(pos[0], "a");
    cr_expect_eq(t.n, 4);
    cr_expect_eq(t.x, 0.5);
    cr_expect(t.on);
    cr_expect_eq(t.color, 2);
    cr_expect_str_eq(t.name, "bob");
    cr_expect(opt_seen(&toy, seen, "--n") && opt_seen(&toy, seen, "--name") && !opt_seen(&toy, seen, "--x"));
    cr_expect_eq(seen[opt_find(toy_rows, "--n")], 1);
    cr_expect_eq(seen[opt_find(toy_rows, "-n")], 5);
}

Test(opt, help_lists_the_rows_with_their_defaults)
{
    Toy d = {.n = 3, .x = 0.25};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    opt_help(f, &toy, &d);
    fclose(f);
    cr_expect_str_eq(text, "usage: toy\n"
                           "toy:\n"
                           "  --n N                    a count (default 3)\n"
                           "  --x X                    a rate (default 0.25, n 3)\n"
                           "                           second line\n"
                           "  --on                     switch\n"
                           "  --color red|green|blue   a colour\n"
                           "end\n");
    free(text);
}

Test(opt, saved_options_read_back_and_optional_keys_may_be_absent)
{
    Toy t = {.n = 7, .x = 0.125, .on = true, .color = 1};
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_int(&w, "v", 1);
    opt_json_write(&w, toy_rows, &t, 0, 0);
    json_close(&w);
    cr_expect_str_eq(b.data, "{\"v\": 1, \"n\": 7, \"x\": 0.125, \"on\": true, \"color\": \"green\"}");
    Json doc;
    Err e;
    cr_assert_eq(json_parse(&doc, b.data, b.len, &e), 0);
    Toy u = {0};
    cr_assert_eq(opt_json_read(doc.root, toy_rows, &u, 0, 0, "w", &e), 0, "%s", e.msg);
    cr_expect(u.n == 7 && u.x == 0.125 && u.on && u.color == 1);
    json_free(&doc);
    const char *older = "{\"n\": 2, \"on\": false, \"color\": \"red\"}";
    cr_assert_eq(json_parse(&doc, older, strlen(older), &e), 0);
    cr_expect_eq(opt_json_read(doc.root, toy_rows, &u, 0, 0, "w", &e), 0, "%s", e.msg);
    cr_expect(u.n == 2 && u.x == 0.125 && u.color == 0);
    json_free(&doc);
    const char *bad = "{\"x\": 1, \"on\": false, \"color\": \"red\"}";
    cr_assert_eq(json_parse(&doc, bad, strlen(bad), &e), 0);
    cr_expect_eq(opt_json_read(doc.root, toy_rows, &u, 0, 0, "w", &e), -1);
    cr_expect_str_eq(e.msg, "w: 'n' missing or not a count");
    json_free(&doc);
    buf_free(&b);
}

/* The options that may change on --resume are those the refusal names. */
Test(opt, train_may_change_names_the_rows_that_may_change)
{
    int named = 0;
    for (const OptRow *r = train_option_table.rows; r->kind != OPT_END; r++) {
        if (!(r->flags & TRAIN_CHANGE))
            continue;
        named++;
        cr_expect(strstr(TRAIN_MAY_CHANGE, r->name) != NULL, "%s not in TRAIN_MAY_CHANGE", r->name);
        cr_expect(!(r->flags & TRAIN_FIXED), "%s", r->name);
    }
    int listed = 0;
    for (const char *s = strstr(TRAIN_MAY_CHANGE, "--"); s; s = strstr(s + 2, "--"))
        listed++;
    cr_expect_eq(named, listed);
}

Test(opt, dump_lists_the_rows_for_programs)
{
    Toy d = {.n = 3, .x = 0.25};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    opt_dump(f, &toy, &d);
    fclose(f);
    cr_expect_str_eq(text, "s2s-options\t1\n"
                           "command\ttoy\n"
                           "args\tFILE\n"
                           "head\tusage: toy\\n\n"
                           "section\ttoy:\n"
                           "option\t--n\t\tN\tvalue\t\ta count (default 3)\n"
                           "option\t--x\t\tX\tvalue\t\ta rate (default 0.25, n 3)\\nsecond line\n"
                           "option\t--on\t\t\tflag\t\tswitch\n"
                           "option\t--color\t\tred|green|blue\tvalue\tred green blue\ta colour\n"
                           "hidden\t--name\t-n\t\tvalue\t\n"
                           "foot\tend\\n\n");
    free(text);
}

Test(opt, dump_option_prints_the_dump_and_exits_0, .exit_code = 0)
{
    Toy t = {0};
    char *argv[] = {"toy", "--n", "4", "--dump-options", NULL};
    int seen[6];
    fflush(stdout);
    if (!freopen("/dev/null", "w", stdout))
        cr_assert_fail("freopen");
    opt_parse(&toy, &t, 4, argv, seen, NULL, 0);
    cr_assert_fail("opt_parse returned after --dump-options");
}
