/*
 * The model file (docs/model.md "The file"): one safetensors file that holds the
 * weights (F32, named as the PyTorch module's state_dict), and in its metadata the
 * configuration (s2s.config, JSON), both vocabularies (s2s.vocab.src/.tgt, tokens in
 * id order joined by '\n'), the tokenizer settings (direction, languages, keep_case,
 * inside s2s.config) and a training summary (s2s.history, JSON).
 *
 * Loading validates everything before returning: the safetensors structure and
 * checksum (base/safetensors.h), the format tag, every config key, the vocabularies
 * (specials in place, no duplicates), and every tensor's presence, dtype and shape
 * against the configuration. Errors are one line that starts with the path:
 *   m.s2s: s2s.config: 'layers' must be an integer in 1..4, not 9
 *   m.s2s: tensor 'decoder.weight_hh_l0' is F32 [768, 256], expected F32 [768, 128]
 *   m.s2s: s2s.vocab.tgt:41: duplicate token 'le' (first on line 13)
 * (the vocabularies' messages count lines of the metadata value: line N is id N - 1).
 * The BPE codes (s2s.bpe.src, s2s.bpe.tgt, optional: files without them translate
 * words) are codes files (text/bpe.h); their messages count lines of the value:
 *   m.s2s: s2s.bpe.src:7: not a merge (expected two symbols separated by one space)
 *
 * This file is not part of the double-precision build (it works on float weights).
 */
#ifndef S2S_MODEL_FILE_H
#define S2S_MODEL_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/model.h"
#include "text/corpus.h"
#include "text/bpe.h"
#include "text/tokenize.h"
#include "text/vocab.h"

/* The s2s.config object: the keys of docs/model.md in its order, on one line. The
   vocabulary sizes are not part of it (they are the vocabularies' sizes). */
void model_config_json(const ModelConfig *c, const TextConfig *t, Buf *out);
/* Parses and checks an s2s.config object; every key must be present, none unknown.
   Vocabulary sizes in *c are left as they were. Messages start with `where`. */
int model_config_parse(ModelConfig *c, TextConfig *t, const char *json, size_t len,
                       const char *where, Err *e);

/* Writes a model file atomically (an existing file is replaced only when the new one
   is complete). history is the s2s.history JSON text (NULL: an empty object). The BPE
   codes of t's sides, when set, go to s2s.bpe.src / s2s.bpe.tgt (codes file text). */
int model_file_save(const char *path, const Model *m, const Vocab *src, const Vocab *tgt,
                    const TextConfig *t, const char *history, Err *e);

/* A loaded model file. */
typedef struct ModelFile {
    Model model; /* weights; grads only when loaded with_grads */
    Vocab *src, *tgt;
    TextConfig text; /* its src_bpe, tgt_bpe are bpe[0], bpe[1] */
    Bpe *bpe[2];     /* s2s.bpe.src, s2s.bpe.tgt; NULL when absent (a side of words) */
    char *history; /* s2s.history, "{}" when the file has none */
    struct StFile *file; /* loaded without gradients: the mapped file the weights are read
                            from in place (their order in the file is the layout's, as s2s
                            writes it), kept open until model_file_free; else NULL */
} ModelFile;

/* Without gradients the file is mapped (base/safetensors.h st_map) and the weights are
   used where they lie when the file holds them in the layout's order, as s2s writes
   them (else copied): mf->model.params is then read-only. With gradients (training, or
   a caller that changes the weights) they are read and copied. */
int model_file_load(ModelFile *mf, const char *path, bool with_grads, Err *e);
/* The same for a file already in memory (bytes are copied); name is used in messages
   where model_file_load uses the path. */
int model_file_parse(ModelFile *mf, const char *name, const void *bytes, size_t len,
                     bool with_grads, Err *e);
void model_file_free(ModelFile *mf);

#endif
