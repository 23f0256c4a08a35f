/* End-to-end: the subcommand table and global flags. */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"

Test(cli_main, no_arguments_prints_usage_and_exits_2)
{
    RunResult r = run_s2s(NULL, (const char *const[]){NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "usage: s2s COMMAND") != NULL, "stderr: %s", r.err);
    run_free(&r);
}

Test(cli_main, unknown_command_is_named)
{
    RunResult r = RUN_S2S(NULL, "frobnicate");
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "s2s: unknown command 'frobnicate' (see 's2s --help')\n");
    run_free(&r);
}

Test(cli_main, help_lists_commands_on_stdout)
{
    RunResult r = RUN_S2S(NULL, "--help");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "usage: s2s COMMAND") != NULL, "stdout: %s", r.out);
    run_free(&r);
}
