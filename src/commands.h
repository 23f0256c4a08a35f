/* The subcommands, one file each (src/cmd_NAME.c). argv[0] is the subcommand name. */
#ifndef S2S_COMMANDS_H
#define S2S_COMMANDS_H

int cmd_prepare(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_info(int argc, char **argv);

#endif
