/*
 * Reader for Tatoeba / manythings.org sentence-pair files: one pair a line,
 * `English<TAB>French`, or `English<TAB>French<TAB>attribution` (columns after the
 * second are ignored). UTF-8; a leading BOM, CRLF line ends and blank lines are
 * accepted. A line is blank when it holds nothing but spaces (and a CR); blank
 * lines are skipped but still counted in line numbers.
 *
 * Faults, each reported as "FILE:LINE: ..." (LINE counts from 1, BYTE is the 1-based
 * byte offset within the line, a leading BOM not counted):
 *   "NUL byte at byte BYTE", "invalid UTF-8 at byte BYTE",
 *   "carriage return inside the line at byte BYTE" (a CR that does not end the line:
 *   old Mac line ends would otherwise make one line of the whole file),
 *   "only one column (expected English<TAB>French)",
 *   "empty English side", "empty French side" (empty or only Unicode White_Space).
 * The first fault is an error unless skip_bad, which skips and counts bad lines and
 * keeps the messages of the CORPUS_BAD_KEEP lowest-numbered ones. A file without a
 * single pair is an error ("FILE: no sentence pairs") unless allow_empty.
 *
 * Lines may be of any length (the whole file is in memory); callers limit pairs by
 * their tokens (prepare --max-len).
 */
#ifndef S2S_TEXT_CORPUS_H
#define S2S_TEXT_CORPUS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "text/tokenize.h"

/* Which column is the source: en-fr (English → French, the default) or fr-en. */
typedef enum Direction { DIR_EN_FR = 0, DIR_FR_EN = 1 } Direction;

/* "en-fr" / "fr-en" to Direction; -1 when unknown. */
int direction_parse(const char *s);
const char *direction_name(Direction d);
Lang direction_src_lang(Direction d);
Lang direction_tgt_lang(Direction d);

/* The tokenizer settings of a prepared corpus and of the model trained on it
   (prepare.json, and s2s.config in a model file). Languages follow the direction. */
typedef struct Bpe Bpe;
typedef struct TextConfig {
    Direction dir;
    bool keep_case;
    /* The subword codes of each side (text/bpe.h), owned by whoever loaded them;
       NULL: the side is words. */
    const Bpe *src_bpe, *tgt_bpe;
} TextConfig;

/* Tokenizer options for the source and the target side. */
TokOpts text_src_opts(const TextConfig *t);
TokOpts text_tgt_opts(const TextConfig *t);

/* One sentence pair. src and tgt point into Corpus.data and are NUL-terminated
   (the tab / CR / LF after them is overwritten); no CR, no tab inside. */
typedef struct Pair {
    const char *src;
    const char *tgt;
    size_t src_len;
    size_t tgt_len;
    size_t line; /* 1-based line number in the file */
} Pair;

#define CORPUS_BAD_KEEP 5

typedef struct CorpusBad {
    size_t line;
    Err err; /* the full "FILE:LINE: ..." message */
} CorpusBad;

typedef struct Corpus {
    char *name;    /* the file name used in messages */
    char *data;    /* the whole file, modified in place */
    size_t len;
    Pair *pairs;
    size_t n;      /* number of pairs */
    size_t lines;  /* lines in the file, blank and bad ones included */
    size_t blank;  /* blank lines skipped */
    size_t bad;    /* bad lines skipped (skip_bad only) */
    CorpusBad first_bad[CORPUS_BAD_KEEP]; /* the lowest-numbered bad lines, ascending */
    size_t n_first_bad;
} Corpus;

typedef struct CorpusOpts {
    Direction dir;
    bool skip_bad;
    bool allow_empty; /* a file without pairs (and without bad lines) is not an error */
} CorpusOpts;

/* Reads and validates the file at path ("-" is standard input, named "<stdin>"). On
   error c is left empty (nothing to free). */
int corpus_read(Corpus *c, const char *path, const CorpusOpts *o, Err *e);

/* The same on data[0..len) (data[len] must be '\0'), which c takes over (it is freed
   with c, also on error). name is used in messages. */
int corpus_parse(Corpus *c, const char *name, char *data, size_t len, const CorpusOpts *o,
                 Err *e);

/* Records a bad line found by a later stage (for instance a side without tokens),
   counting it in c->bad and keeping its message among the lowest-numbered ones. */
void corpus_note_bad(Corpus *c, size_t line, const Err *msg);

void corpus_free(Corpus *c);

/* The pairs of a corpus grouped by identical source text (multi-reference scoring):
   group g holds the pairs member[start[g] .. start[g+1]) in file order, groups are
   in the order of their first pair, and group_of[i] is the group of pair i. */
typedef struct SourceGroups {
    size_t n;         /* number of groups */
    size_t *start;    /* (n + 1) */
    size_t *member;   /* (pairs) */
    size_t *group_of; /* (pairs) */
} SourceGroups;

void corpus_group_sources(const Corpus *c, SourceGroups *g);
void source_groups_free(SourceGroups *g);

#endif
