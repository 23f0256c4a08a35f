/*
 * Reader for Tatoeba / manythings.org sentence-pair files: one pair a line,
 * `English<TAB>Other`, or `English<TAB>Other<TAB>attribution` (columns after the
 * second are ignored; the column languages are those of CorpusOpts, English and
 * French in the messages below), and for the source<TAB>target files prepare writes.
 * A file whose name ends in .gz, or whose bytes start as gzip's, is decompressed
 * first (base/gzip.h). UTF-8; a leading BOM, CRLF line ends and blank lines are
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

/* The source and the target language; name is "SRC-TGT" ("en-fr", "de-en"). */
typedef struct Direction {
    Lang src, tgt;
    char name[8];
} Direction;

Direction direction_make(Lang src, Lang tgt);
/* "X-Y" with X and Y language codes (text/lang.h) to a Direction in canonical codes
   ("en-deu" is "en-de"): 0, or -1 when either is not a code. */
int direction_parse(const char *s, Direction *out);
#define DIRECTION_EN_FR direction_make(LANG_EN, LANG_FR)
#define DIRECTION_FR_EN direction_make(LANG_FR, LANG_EN)

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
    char *name;    /* the file name used in messages (parallel files: the source's) */
    char *tgt_name; /* parallel files: the target file's name; NULL for one file */
    char *data;    /* the whole file, modified in place */
    char *tgt_data; /* parallel files: the target file */
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
    Lang cols[2];    /* the languages of the two columns (messages) */
    bool src_second; /* the source is the second column */
    bool skip_bad;
    bool allow_empty; /* a file without pairs (and without bad lines) is not an error */
} CorpusOpts;

/* A Tatoeba file in direction d: English first, the source the second column when
   the target is English. */
CorpusOpts corpus_opts_tatoeba(Direction d);
/* A source<TAB>target file in direction d (prepare's outputs, eval's input). */
CorpusOpts corpus_opts_pairs(Direction d);

/* Reads and validates the file at path ("-" is standard input, named "<stdin>"). On
   error c is left empty (nothing to free). */
int corpus_read(Corpus *c, const char *path, const CorpusOpts *o, Err *e);

/* The same on data[0..len) (data[len] must be '\0'), which c takes over (it is freed
   with c, also on error). name is used in messages. */
int corpus_parse(Corpus *c, const char *name, char *data, size_t len, const CorpusOpts *o,
                 Err *e);

/*
 * Parallel plain files: line i of src_path is the translation of line i of tgt_path
 * (each file ".gz" or plain as above). The columns of o name the languages and
 * src_second is ignored. Lines are checked as in a TSV file, with the same messages
 * naming the file that holds the fault, and besides:
 *   "SRC has N lines but TGT has M; line i of one must translate line i of the other"
 *   (nothing else is checked then), "FILE:LINE: tab inside the line at byte BYTE",
 *   "FILE:LINE: empty line (LINE of OTHER is not)".
 * A line blank in both files is skipped as blank.
 */
int corpus_read_parallel(Corpus *c, const char *src_path, const char *tgt_path,
                         const CorpusOpts *o, Err *e);

/* The file that holds a side of the pairs (0 source, 1 target), for messages. */
const char *corpus_file(const Corpus *c, int side);

/* Checks one line s[0..n) (without its line end) of the file name: no NUL, no CR,
   valid UTF-8; 0, or -1 with the "NAME:LINE: ..." message of the fault. */
int corpus_check_line(const char *name, size_t lineno, const char *s, size_t n, Err *e);

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
