/* Unit tests of the sentence splitter (src/text/sentences.c). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "text/sentences.h"

/* Splits line and checks the pieces against the NULL-terminated expected strings. */
static void expect_split(Lang lang, const char *line, ...)
{
    SentSpan *sp;
    size_t n = sent_split(line, strlen(line), lang, &sp);
    va_list ap;
    va_start(ap, line);
    size_t k = 0;
    for (const char *want; (want = va_arg(ap, const char *)); k++) {
        cr_assert_lt(k, n, "%s: only %zu pieces, expected \"%s\" next", line, n, want);
        cr_assert_leq(sp[k].off + sp[k].len, strlen(line));
        char *got = strndup(line + sp[k].off, sp[k].len);
        cr_assert_str_eq(got, want, "%s: piece %zu", line, k);
        free(got);
    }
    va_end(ap);
    cr_assert_eq(n, k, "%s: %zu pieces, expected %zu", line, n, k);
    free(sp);
}

Test(sentences, paragraph_of_three)
{
    expect_split(LANG_EN, "I came home. The door was open! Who opened it?", "I came home.",
                 "The door was open!", "Who opened it?", NULL);
    expect_split(LANG_EN, "A. B.", "A. B.", NULL); /* an initial */
    expect_split(LANG_EN, "Go. Run.", "Go.", "Run.", NULL);
}

Test(sentences, english_abbreviations)
{
    expect_split(LANG_EN, "Mr. Smith met Dr. Jones. They talked.", "Mr. Smith met Dr. Jones.",
                 "They talked.", NULL);
    expect_split(LANG_EN, "Mrs. Brown and Ms. Green left. Prof. Black stayed.",
                 "Mrs. Brown and Ms. Green left.", "Prof. Black stayed.", NULL);
    expect_split(LANG_EN, "Bring fruit, e.g. Apples. I live in the U.S. Now.",
                 "Bring fruit, e.g. Apples.", "I live in the U.S. Now.", NULL);
    expect_split(LANG_EN, "J. K. Rowling wrote it. She lives in Scotland.",
                 "J. K. Rowling wrote it.", "She lives in Scotland.", NULL);
    expect_split(LANG_EN, "We met at 5 p.m. Tom came too.", "We met at 5 p.m. Tom came too.", NULL);
    expect_split(LANG_EN, "See No. 5 here. (Mr. Lee agreed.) Then we left.", "See No. 5 here.",
                 "(Mr. Lee agreed.)", "Then we left.", NULL);
    expect_split(LANG_EN, "No. Go away.", "No.", "Go away.", NULL);
    /* abbreviations are compared with their case */
    expect_split(LANG_EN, "I said no. Then I left.", "I said no.", "Then I left.", NULL);
}

Test(sentences, french_abbreviations)
{
    expect_split(LANG_FR, "M. Dupont est là. Mme. Durand aussi.", "M. Dupont est là.",
                 "Mme. Durand aussi.", NULL);
    expect_split(LANG_FR, "Mlle. Martin arrive. Elle est en retard.", "Mlle. Martin arrive.",
                 "Elle est en retard.", NULL);
    /* French abbreviations are not English ones, and the other way round */
    expect_split(LANG_EN, "Call me. Me too.", "Call me.", "Me too.", NULL);
    expect_split(LANG_FR, "Voir Me. Dupont.", "Voir Me. Dupont.", NULL);
    expect_split(LANG_FR, "Il est venu à 3 h. Mr. Smith aussi.", "Il est venu à 3 h.",
                 "Mr.", "Smith aussi.", NULL);
}

Test(sentences, quotes_and_brackets)
{
    expect_split(LANG_FR, "« Il a dit : « Viens. » Puis il est parti. »",
                 "« Il a dit : « Viens. » Puis il est parti. »", NULL);
    expect_split(LANG_FR, "Il a dit : « Viens. » Puis il est parti.", "Il a dit : « Viens. »",
                 "Puis il est parti.", NULL);
    expect_split(LANG_FR, "« Tu viens ? » demanda-t-il.", "« Tu viens ? » demanda-t-il.", NULL);
    expect_split(LANG_EN, "He said \"Stop. Now.\" Then he left.", "He said \"Stop. Now.\"",
                 "Then he left.", NULL);
    expect_split(LANG_EN, "He said \"Stop.\" and left.", "He said \"Stop.\" and left.", NULL);
    expect_split(LANG_EN, "She wrote “Yes. Maybe.” Then nothing.", "She wrote “Yes. Maybe.”",
                 "Then nothing.", NULL);
    expect_split(LANG_EN, "It rained (a lot. Really.) Then it stopped.",
                 "It rained (a lot. Really.)", "Then it stopped.", NULL);
    expect_split(LANG_EN, "Wait. \"Why?\" he asked.", "Wait.", "\"Why?\" he asked.", NULL);
    /* an unclosed bracket ends splitting */
    expect_split(LANG_EN, "It rained (a lot. Really. Then it stopped.",
                 "It rained (a lot. Really. Then it stopped.", NULL);
}

Test(sentences, runs_of_marks)
{
    expect_split(LANG_EN, "You did what?! I can't believe it... Really?", "You did what?!",
                 "I can't believe it...", "Really?", NULL);
    expect_split(LANG_EN, "Hmm… Maybe.", "Hmm…", "Maybe.", NULL);
    expect_split(LANG_FR, "Tu viens ? Oui ! Bien.", "Tu viens ?", "Oui !", "Bien.", NULL);
    /* the narrow no-break space of French typography */
    expect_split(LANG_FR, "Tu viens\u202F?\u202FOui.", "Tu viens\u202F?", "Oui.", NULL);
}

Test(sentences, numbers)
{
    expect_split(LANG_EN, "Pi is 3.14 roughly. It never ends.", "Pi is 3.14 roughly.",
                 "It never ends.", NULL);
    expect_split(LANG_EN, "It costs 3.50 dollars.", "It costs 3.50 dollars.", NULL);
    expect_split(LANG_EN, "I was born in 1990. 2000 was a good year.", "I was born in 1990.",
                 "2000 was a good year.", NULL);
}

Test(sentences, lowercase_after_mark_does_not_split)
{
    expect_split(LANG_EN, "Hello. world. ok", "Hello. world. ok", NULL);
}

Test(sentences, no_final_punctuation)
{
    expect_split(LANG_EN, "Hello. How are you", "Hello.", "How are you", NULL);
    expect_split(LANG_EN, "no punctuation at all", "no punctuation at all", NULL);
}

Test(sentences, spaces)
{
    expect_split(LANG_EN, "   Hi.    There.   ", "Hi.", "There.", NULL);
    expect_split(LANG_EN, "\tOne.\t Two.", "One.", "Two.", NULL);
    expect_split(LANG_EN, "", NULL);
    expect_split(LANG_EN, "   \t ", NULL);
    SentSpan *sp;
    const char *line = "  A b.  C d.  ";
    cr_assert_eq(sent_split(line, strlen(line), LANG_EN, &sp), 2);
    cr_assert_eq(sp[0].off, 2);
    cr_assert_eq(sp[0].len, 4);
    cr_assert_eq(sp[1].off, 8);
    cr_assert_eq(sp[1].len, 4);
    free(sp);
}

Test(sentences, accented_capitals)
{
    expect_split(LANG_FR, "Il pleut. À demain. Équipe prête. Ça va.", "Il pleut.", "À demain.",
                 "Équipe prête.", "Ça va.", NULL);
    expect_split(LANG_FR, "Il pleut. écoute.", "Il pleut. écoute.", NULL);
    /* a decomposed capital: E then U+0301 */
    expect_split(LANG_FR, "Bon. E\u0301te\u0301 chaud.", "Bon.", "E\u0301te\u0301 chaud.", NULL);
}

Test(sentences, generic_language)
{
    Lang de;
    cr_assert_eq(lang_parse("de", &de), 0);
    expect_split(de, "Dr. Müller kommt. Er ist spät.", "Dr. Müller kommt.", "Er ist spät.", NULL);
    expect_split(de, "Ich sehe Mr. Bean.", "Ich sehe Mr.", "Bean.", NULL);
}

Test(sentences, invalid_utf8_is_plain_text)
{
    expect_split(LANG_EN, "Bad \xFF byte. Next one.", "Bad \xFF byte.", "Next one.", NULL);
    expect_split(LANG_EN, "End.\xC3", "End.\xC3", NULL);
}
