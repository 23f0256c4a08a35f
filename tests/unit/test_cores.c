/* The default thread count: the usable cores less those other processes keep busy. */
#include <criterion/criterion.h>

#include "base/cores.h"

Test(cores, free_cores_are_the_usable_ones_less_other_runnable_threads)
{
    cr_expect_eq(cores_free_of(2, 1), 2, "alone: both cores");
    cr_expect_eq(cores_free_of(2, 2), 1, "beside one busy process: one");
    cr_expect_eq(cores_free_of(2, 5), 1, "at least one");
    cr_expect_eq(cores_free_of(8, 3), 6);
    cr_expect_eq(cores_free_of(4, 0), 4, "a snapshot that missed the caller");
    int u = cores_usable(), f = cores_free();
    cr_expect(u >= 1 && f >= 1 && f <= u, "usable %d, free %d", u, f);
}
