/*
 * The interactive translator of `s2s translate` on a terminal: a prompt with line
 * editing and history (libedit), one translation per line typed, and commands:
 *   :beam K        beam size (1 = greedy); the n-best count is lowered to fit
 *   :nbest N       show the N best hypotheses (1..beam), one a line: "N. TEXT  (SCORE)"
 *   :attn on|off   print the attention heatmap (decode/align.h) after each translation
 *   :help          the commands
 *   :quit          leave (so do Ctrl-D on an empty line and Ctrl-C, with status 0)
 * An unknown command or a bad value prints one error line and the prompt comes back;
 * so does a line that cannot be translated (its error names the line "<stdin>:N").
 * A line is split into sentences as s2s_translate does with the split option (when
 * o->split, with n-best 1 and the heatmap off). It translates through the library's
 * interface (include/s2s.h) alone.
 * History lives in memory while the prompt runs. Ctrl-C exits at once, also during a
 * translation, after the terminal is restored. With svg_dir, each translated line's
 * attention is also written to svg_dir/NNNN.svg (NNNN the line's number in the
 * prompt, from 1), as `s2s translate --attention-svg` does.
 */
#ifndef S2S_CMD_REPL_H
#define S2S_CMD_REPL_H

#include <stdbool.h>

#include "base/err.h"
#include "s2s.h"

/* Runs the prompt on the terminal of stdin/stdout until the user leaves: 0, or -1 with
   e set when the prompt cannot start. Ctrl-C at the prompt ends the process (status
   0). o gives the initial settings (batch is forced to 1), attn whether heatmaps are
   on, svg_dir (NULL: none) an existing directory for pictures. */
int repl_run(const s2s_translator *tr, const char *model_path, const s2s_translator_options *o, bool attn,
             const char *svg_dir, Err *e);

#endif
