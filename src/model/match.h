/*
 * Whether two model files can be combined: averaged (same configuration, same
 * vocabularies, so every tensor means the same thing in both) or ensembled (the same
 * vocabularies and tokenizer settings, so one encoding of the source serves all and
 * their output distributions are over the same tokens; the architectures may differ).
 */
#ifndef S2S_MODEL_MATCH_H
#define S2S_MODEL_MATCH_H

#include "base/err.h"
#include "model/file.h"

/* 0 when b (at path bn) has a's (at path an) configuration, both vocabularies and the
   same subword codes (or none);
   otherwise -1 with e naming the first difference, e.g.
     b.s2s: 'layers' is 2, a.s2s has 3
     b.s2s: s2s.vocab.tgt: id 17 is 'la', a.s2s has 'le' */
int model_match_for_average(const ModelFile *a, const char *an, const ModelFile *b, const char *bn, Err *e);
/* 0 when b has a's vocabularies, subword codes and tokenizer settings (direction,
   languages, case): the
   source is encoded once for all members and their outputs are over the same tokens;
   -1 with e naming the first difference otherwise. */
int model_match_for_ensemble(const ModelFile *a, const char *an, const ModelFile *b, const char *bn, Err *e);

#endif
