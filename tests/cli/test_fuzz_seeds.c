/* Every committed seed of every fuzz target (fuzz/seeds/NAME) passes the target's checks
   when replayed without libFuzzer ($S2S_BUILD/fuzz-replay/NAME, built by `make test` with
   this build's compiler and sanitizers; fuzz/replay.c). The seeds hold what fuzzing kept:
   inputs covering every edge the targets reached in their hours (docs/reliability.md). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

static char *replay_bin(const char *target)
{
    const char *build = getenv("S2S_BUILD");
    return strf("%s/fuzz-replay/%s", build && *build ? build : "build/release", target);
}

static void replay_seeds(const char *target)
{
    char *bin = replay_bin(target), *dir = strf("fuzz/seeds/%s", target);
    int n = dir_count(dir);
    cr_assert_gt(n, 0, "%s has no seeds", dir);
    char *want = strf("replay: %d inputs\n", n);
    RunResult r = RUN_PROG(NULL, bin, dir);
    expect_run(&r, 0, want, "");
    free(want);
    free(dir);
    free(bin);
}

#define SEEDS_TEST(target) \
    Test(fuzz_seeds, target##_seeds_pass_the_target_checks) { replay_seeds(#target); }

SEEDS_TEST(corpus)
SEEDS_TEST(gz_corpus)
SEEDS_TEST(tokenize)
SEEDS_TEST(vocab)
SEEDS_TEST(json)
SEEDS_TEST(model_file)
SEEDS_TEST(bpe)
SEEDS_TEST(ids)
SEEDS_TEST(serve_request)
SEEDS_TEST(constraints)
SEEDS_TEST(serve_form)
SEEDS_TEST(parallel)
SEEDS_TEST(state)

Test(fuzz_seeds, replay_names_a_path_it_cannot_read)
{
    char *bin = replay_bin("vocab");
    RunResult r = RUN_PROG(NULL, bin, "fuzz/seeds/vocab", "fuzz/seeds/none");
    expect_run(&r, 2, "", "replay: cannot read fuzz/seeds/none: no such file or directory\n");
    free(bin);
}
