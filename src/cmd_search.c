/* The decoding options that `translate`, `eval` and `serve` share, and the load of
   `info` and `export` (cmd_search.h). */
#include "cmd_search.h"

#include "base/err.h"

_Static_assert(sizeof(s2s_precision) == sizeof(int), "--precision is an OPT_ENUM field");

const char *const decode_precision_names[3] = {
    [S2S_PRECISION_INT8] = "int8", [S2S_PRECISION_BF16] = "bf16", [S2S_PRECISION_F32] = "f32"};

DecodeArgs decode_args_default(void)
{
    return (DecodeArgs){.o = s2s_translator_options_default()};
}

s2s_translator *cmd_load_as_stored(const char *path)
{
    s2s_translator_options lo = s2s_translator_options_default();
    lo.precision = S2S_PRECISION_F32;
    lo.threads = 1;
    s2s_error err;
    s2s_translator *tr = s2s_translator_load(&path, 1, &lo, &err);
    if (!tr)
        die("%s", err.message);
    return tr;
}
