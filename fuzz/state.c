/* Fuzz target: the reader of a training state's header that `s2s train --resume` starts
   from (train_saved_opts, train/trainer.h): the format, s2s.config (the model's
   configuration) and s2s.state (the run's progress and every saved training option).
   The input is written as MODEL.state in a directory of the process's own and read
   back. A refusal is one line naming the file; an accepted state names its data, as
   valid UTF-8, and its configuration passes the checks of its kind; a state that
   predates saved options leaves the defaults. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/file.h"
#include "base/utf8.h"
#include "fuzz.h"
#include "model/model.h"
#include "train/trainer.h"

static char *dir, *model_path, *state_path;

static void cleanup(void)
{
    unlink(state_path);
    rmdir(dir);
}

/* The directory in memory (/dev/shm) where there is one: on a disk, rewriting the file
   at every input makes the target wait on the disk far more than it runs. */
static void setup(void)
{
    char shm[] = "/dev/shm/s2s-fuzz-state-XXXXXX", tmp[] = "/tmp/s2s-fuzz-state-XXXXXX";
    const char *made = mkdtemp(shm);
    if (!made && !(made = mkdtemp(tmp)))
        BUG("mkdtemp failed");
    dir = xstrdup(made);
    model_path = path_join(dir, "m.s2s");
    state_path = path_suffixed(model_path, ".state");
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!model_path)
        setup();
    FILE *f = fopen(state_path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        BUG("cannot write %s", state_path);
    TrainOpts o;
    char *run_data;
    Err e;
    int rc = train_saved_opts(model_path, &o, &run_data, &e);
    if (rc < 0) {
        fuzz_check_msg(&e, state_path);
        CHECK(run_data == NULL);
    } else if (rc == 1) {
        CHECK(run_data == NULL);
    } else {
        CHECK(rc == 0 && run_data != NULL);
        CHECK(utf8_valid(run_data, strlen(run_data)));
        ModelConfig c = o.cfg;
        c.src_vocab = c.tgt_vocab = 5;
        if (model_config_check(&c, &e) != 0)
            fuzz_check_msg(&e, "--"); /* a saved option out of range: the run then refuses it */
        free(run_data);
    }
    return 0;
}
