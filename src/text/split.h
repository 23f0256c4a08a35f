/* Train / valid / test assignment, grouped by key (the source sentence). */
#ifndef S2S_TEXT_SPLIT_H
#define S2S_TEXT_SPLIT_H

#include <stddef.h>
#include <stdint.h>

typedef enum SplitId { SPLIT_TRAIN = 0, SPLIT_VALID = 1, SPLIT_TEST = 2, SPLIT_COUNT = 3 } SplitId;

/* The files of a directory written by `s2s prepare`, in the order it writes them:
   the three splits, the two vocabularies, prepare.json (last: its presence marks a
   prepared directory). */
#define PREPARED_NFILES 6
extern const char *const prepared_files[PREPARED_NFILES];
/* The token ids of each split (docs/model.md), written after the files above: a
   directory without them still trains, from the text. */
extern const char *const prepared_ids_files[SPLIT_COUNT];

/* "train", "valid", "test". */
const char *split_name(SplitId s);

/* The default size of valid and of test for a corpus of n pairs:
   SPLIT_DEFAULT_MAX, but at most 10% of the pairs (rounded down). */
#define SPLIT_DEFAULT_MAX 2000
size_t split_default_size(size_t n_pairs);

typedef struct SplitKey {
    const char *s;
    size_t len;
} SplitKey;

/*
 * Assigns each of n items to a split. Items with byte-identical keys form a group,
 * and a group goes whole to one split, so no key occurs in two splits. The groups
 * are ordered by key (bytewise), shuffled with an Rng seeded by seed, and taken in
 * that order: a group goes to valid when it still fits into n_valid items, else to
 * test when it still fits into n_test items, else to train. Valid and test thus
 * never exceed their sizes (and reach them unless large groups are all that is
 * left). Same keys and seed, same assignment.
 *
 * out[i] receives the SplitId of item i, counts[s] the number of items in split s.
 * Returns the number of groups.
 */
size_t split_assign(const SplitKey *keys, size_t n, size_t n_valid, size_t n_test, uint64_t seed,
                    uint8_t *out, size_t counts[SPLIT_COUNT]);

#endif
