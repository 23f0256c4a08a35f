/* Parsers of option values shared by the commands' option tables (base/opt.h). */
#include "commands.h"

#include "data/prepare.h"
#include "text/lang.h"

int cmd_opt_lang(const char *value, void *field)
{
    return lang_parse(value, field);
}

int cmd_opt_direction(const char *value, void *field)
{
    return prepare_direction_parse(value, field);
}
