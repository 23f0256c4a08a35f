/* The decoding options that `translate`, `eval` and `serve` share (cmd_search.h). */
#include "cmd_search.h"

_Static_assert(sizeof(s2s_precision) == sizeof(int), "--precision is an OPT_ENUM field");

const char *const decode_precision_names[3] = {
    [S2S_PRECISION_INT8] = "int8", [S2S_PRECISION_BF16] = "bf16", [S2S_PRECISION_F32] = "f32"};

DecodeArgs decode_args_default(void)
{
    return (DecodeArgs){.o = s2s_translator_options_default()};
}
