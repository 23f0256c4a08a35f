/* A small, fast, seedable random number generator (xoshiro256**, seeded by splitmix64).
   Same seed, same sequence, on every machine. */
#ifndef S2S_BASE_RNG_H
#define S2S_BASE_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct Rng {
    uint64_t s[4];
} Rng;

void rng_seed(Rng *r, uint64_t seed);
uint64_t rng_u64(Rng *r);
/* A stateless 64-bit mix of x (splitmix64's finalizer): for keyed hashes. */
uint64_t rng_mix(uint64_t x);
/* Uniform in [0, 1) with 53 bits. */
double rng_uniform(Rng *r);
/* Uniform integer in [0, n), unbiased; n > 0. */
uint64_t rng_below(Rng *r, uint64_t n);
/* Standard normal (Box–Muller). */
double rng_normal(Rng *r);
/* Fisher–Yates shuffle of n elements of size bytes each. */
void rng_shuffle(Rng *r, void *base, size_t n, size_t size);

#endif
