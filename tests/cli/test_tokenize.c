/* End-to-end: s2s tokenize. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

Test(cli_tokenize, english_by_default)
{
    RunResult r = RUN_S2S("Hello, World!\nDon't worry, it's 3.5 or 1,000.\n", "tokenize");
    expect_ok(&r, "Hello , World !\nDon't worry , it's 3.5 or 1,000 .\n");
}

Test(cli_tokenize, french_splits_elisions)
{
    RunResult r = RUN_S2S("J\u2019ai vu l'homme qu'il aime aujourd'hui\u00A0!\n", "tokenize", "--lang",
                          "fr");
    expect_ok(&r, "J' ai vu l' homme qu' il aime aujourd'hui !\n");
    r = RUN_S2S("J'ai\n", "tokenize", "--lang=fr");
    expect_ok(&r, "J' ai\n");
    r = RUN_S2S("J'ai\n", "tokenize", "--lang", "en");
    expect_ok(&r, "J'ai\n");
}

/* Case is kept by default, as prepare keeps it; --lowercase folds it. */
Test(cli_tokenize, keep_case)
{
    RunResult r = RUN_S2S("L'ÉCOLE Straße\n", "tokenize", "--keep-case", "--lang", "fr");
    expect_ok(&r, "L' ÉCOLE Straße\n");
    r = RUN_S2S("L'ÉCOLE Straße\n", "tokenize", "--lang", "fr");
    expect_ok(&r, "L' ÉCOLE Straße\n");
    r = RUN_S2S("L'ÉCOLE Straße\n", "tokenize", "--lang", "fr", "--lowercase");
    expect_ok(&r, "l' école strasse\n");
}

Test(cli_tokenize, one_output_line_per_input_line)
{
    RunResult r = RUN_S2S("a b\n\n  \t \nc.\n\u00A0\n", "tokenize");
    expect_ok(&r, "a b\n\n\nc .\n\n");
    r = RUN_S2S("no newline at the end", "tokenize");
    expect_ok(&r, "no newline at the end\n");
    r = RUN_S2S("", "tokenize");
    expect_ok(&r, "");
    r = RUN_S2S("\n", "tokenize");
    expect_ok(&r, "\n");
}

Test(cli_tokenize, crlf_and_bom)
{
    RunResult r = RUN_S2S("\xEF\xBB\xBFHello!\r\nWorld.\r\n\r\nx\r", "tokenize");
    expect_ok(&r, "Hello !\nWorld .\n\nx\n");
    /* a CR inside a line is whitespace */
    r = RUN_S2S("a\rb\n", "tokenize");
    expect_ok(&r, "a b\n");
}

Test(cli_tokenize, invalid_utf8_names_line_and_byte)
{
    RunResult r = RUN_S2S("ok\nab\xFF" "c\nnever\n", "tokenize");
    expect_run(&r, 1, "ok\n", "s2s: <stdin>:2: invalid UTF-8 at byte 3\n");
    r = RUN_S2S("\xC3\xA9t\xC3\n", "tokenize", "--lang", "fr");
    expect_fail(&r, 1, "s2s: <stdin>:1: invalid UTF-8 at byte 4\n");
    /* bytes are counted after a leading byte order mark */
    r = RUN_S2S("\xEF\xBB\xBF\xC0\x80\n", "tokenize");
    expect_fail(&r, 1, "s2s: <stdin>:1: invalid UTF-8 at byte 1\n");
    r = RUN_S2S("fine\nj' ai\n\xED\xA0\x80\n", "tokenize", "--detok", "--lang", "fr");
    expect_run(&r, 1, "fine\nj'ai\n", "s2s: <stdin>:3: invalid UTF-8 at byte 1\n");
}

Test(cli_tokenize, detok)
{
    RunResult r = RUN_S2S("j' ai dit : « oui » !\nqu' est-ce que c' est ? !\n\n", "tokenize", "--detok",
                          "--lang", "fr");
    expect_ok(&r, "j'ai dit : « oui » !\nqu'est-ce que c'est ?!\n\n");
    r = RUN_S2S("\" hello , \" she said .\r\ni owe him $ 100 .\n", "tokenize", "--detok");
    expect_ok(&r, "\"hello,\" she said.\ni owe him $100.\n");
}

Test(cli_tokenize, round_trip_through_the_command)
{
    const char *in = "Qu'est-ce que c'est\u00A0?\n\"J'ai oublié\", répondit-elle.\n";
    RunResult r = RUN_S2S(in, "tokenize", "--lang", "fr", "--keep-case");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "Qu' est-ce que c' est ?\n\" J' ai oublié \" , répondit-elle .\n");
    RunResult d = RUN_S2S(r.out, "tokenize", "--lang", "fr", "--detok");
    expect_ok(&d, "Qu'est-ce que c'est ?\n\"J'ai oublié\", répondit-elle.\n");
    run_free(&r);
}

/* Any ISO 639 code; German by the generic rules, there and back. */
Test(cli_tokenize, generic_language)
{
    RunResult r = RUN_S2S("„Grüß Gott“, sagte sie. Das kostet 3,50 €.\n", "tokenize", "--lang", "deu");
    RunResult d = RUN_S2S(r.out, "tokenize", "--lang", "de", "--detok");
    expect_ok(&r, "„ Grüß Gott “ , sagte sie . Das kostet 3,50 € .\n");
    expect_ok(&d, "„Grüß Gott“, sagte sie. Das kostet 3,50 €.\n");
}

Test(cli_tokenize, usage_errors)
{
    RunResult r = RUN_S2S("x\n", "tokenize", "--frobnicate");
    expect_fail(&r, 2, "s2s: tokenize: unknown option '--frobnicate' (see 's2s tokenize --help')\n");
    r = RUN_S2S("x\n", "tokenize", "--lang", "xx");
    expect_fail(&r, 2, "s2s: tokenize: option --lang must be an ISO 639 language code, got 'xx'\n");
    r = RUN_S2S("x\n", "tokenize", "--lang=EN");
    expect_fail(&r, 2, "s2s: tokenize: option --lang must be an ISO 639 language code, got 'EN'\n");
    r = RUN_S2S("x\n", "tokenize", "--lang");
    expect_fail(&r, 2, "s2s: tokenize: option --lang needs a value\n");
    r = RUN_S2S("x\n", "tokenize", "--keep-case=yes");
    expect_fail(&r, 2, "s2s: tokenize: option --keep-case takes no value\n");
    r = RUN_S2S("x\n", "tokenize", "file.txt");
    expect_fail(&r, 2, "s2s: tokenize: unexpected argument 'file.txt' (see 's2s tokenize --help')\n");
}

Test(cli_tokenize, help)
{
    RunResult r = RUN_S2S(NULL, "tokenize", "--help");
    cr_expect_eq(r.status, 0);
    cr_expect(starts_with(r.out, "usage: s2s tokenize [--lang CODE] [--lowercase|--keep-case] [--bpe CODES] [--detok|--join] < IN > OUT\n"),
              "stdout: %s", r.out);
    cr_expect_str_eq(r.err, "");
    run_free(&r);
    r = RUN_S2S(NULL, "--help");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "\n  tokenize ") != NULL, "stdout: %s", r.out);
    run_free(&r);
}

/* The whole Tatoeba file (both columns on each line) gives one line per line. */
Test(cli_tokenize, full_corpus)
{
    const char *path = fra_corpus();
    if (!path)
        cr_skip_test("corpus not found at ../shared/data/fra.txt");
    char *in = slurp(path, NULL);
    cr_assert(in != NULL);
    RunResult r = RUN_S2S(in, "tokenize", "--lang", "fr", "--lowercase");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.err, "");
    cr_expect_eq(count_newlines(r.out), count_newlines(in));
    cr_expect(starts_with(r.out, "go . va !\nhi . salut !\nwho ? qui ?\nwow ! ça alors !\n"),
              "start: %.80s", r.out);
    run_free(&r);
    free(in);
}
