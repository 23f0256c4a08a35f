/*
 * A Transformer model file in CTranslate2's model format (docs/cli/export.md): a
 * directory with model.bin (CTranslate2's binary layout, version 6, "TransformerSpec"
 * revision 7), config.json, the vocabularies as JSON lists (shared_vocabulary.json when
 * both sides have one vocabulary, else source_ and target_vocabulary.json), the BPE codes
 * of each side that has them (source.bpe, target.bpe: codes files s2s tokenize --bpe
 * reads) and TOKENIZATION.txt, how text goes in and out.
 *
 * The weights are written as s2s holds them, in f32: the self-attention's fused
 * projection is CTranslate2's linear_0, the encoder-decoder attention's query rows its
 * linear_0 and key and value rows its linear_1; the position table (sinusoidal, s2s's
 * interleaved sines and cosines, or the learned one) is written out, since CTranslate2's
 * own sinusoids are laid out otherwise. Tied and shared tensors are written once and
 * aliased, as CTranslate2's converters do.
 *
 * This file is not part of the double-precision build (it works on float weights).
 */
#ifndef S2S_MODEL_CT2_EXPORT_H
#define S2S_MODEL_CT2_EXPORT_H
#include "base/err.h"
#include "model/file.h"

/* Rows of the sinusoidal position table written for a model without a learned one:
   CTranslate2 refuses longer inputs or outputs. */
#define CT2_SINUSOID_ROWS 1024

/* Writes mf (read from name) to the directory dir, which must not exist or be an
   empty directory: the files are written in a directory beside it that is renamed to
   dir when every file is complete, so a failure leaves dir as it was. A recurrent model
   is refused. Messages start with name or dir. */
int ct2_export(const ModelFile *mf, const char *name, const char *dir, Err *e);

#endif
