/* The subcommands, one file each (src/cmd_NAME.c). argv[0] is the subcommand name.
   The decoding options that translate, eval and serve share: cmd_search.h. */
#ifndef S2S_COMMANDS_H
#define S2S_COMMANDS_H

int cmd_prepare(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_average(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* OPT_PARSE parsers (base/opt.h): an ISO 639 code into a Lang, a --direction
   (en-XX or XX-en) into a Direction. */
int cmd_opt_lang(const char *value, void *field);
int cmd_opt_direction(const char *value, void *field);
#define CMD_DIRECTION_CHOICES "en-XX or XX-en with XX an ISO 639 language code"

#endif
