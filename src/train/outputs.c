#include "train/outputs.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safetensors.h"
#include "data/prepare_bpe.h"
#include "text/split.h"

typedef enum Kind { KIND_MODEL, KIND_STATE, KIND_LOG, KIND_PREPARED } Kind;

static const char *const kind_names[] = {"an s2s model file", "an s2s training state",
                                         "an s2s training log", "a directory written by s2s prepare"};

/* A training log's first line is the "start" (or, when the log was lost, "resume")
   event that train writes before anything else. */
static bool is_log(const char *path)
{
    char head[64];
    long n = file_head(path, head, sizeof head);
    return n > 0 && (strncmp(head, "{\"event\": \"start\",", 18) == 0 ||
                     strncmp(head, "{\"event\": \"resume\",", 19) == 0);
}

static bool is_prepared(const char *dir)
{
    char *marker = path_join(dir, "prepare.json");
    struct stat st;
    bool yes = stat(marker, &st) == 0 && S_ISREG(st.st_mode);
    free(marker);
    return yes;
}

static bool is_kind(const char *path, const struct stat *st, Kind k)
{
    switch (k) {
    case KIND_MODEL: return S_ISREG(st->st_mode) && st_has_format(path, ST_FORMAT_MODEL);
    case KIND_STATE: return S_ISREG(st->st_mode) && st_has_format(path, TRAIN_FORMAT_STATE);
    case KIND_LOG: return S_ISREG(st->st_mode) && is_log(path);
    case KIND_PREPARED: return S_ISDIR(st->st_mode) && is_prepared(path);
    }
    return false;
}

/* The inputs of a run: the corpus file, or the prepared directory and its files (the
   BPE codes files included), and the model of --init. */
typedef struct Inputs {
    char *path[PREPARED_NFILES + SPLIT_COUNT + 4];
    size_t n;
} Inputs;

static void inputs_of(Inputs *in, const char *data, const char *base, bool corpus)
{
    in->n = 0;
    in->path[in->n++] = xstrdup(data);
    if (base)
        in->path[in->n++] = xstrdup(base);
    for (int i = 0; !corpus && i < PREPARED_NFILES; i++)
        in->path[in->n++] = path_join(data, prepared_files[i]);
    for (int i = 0; !corpus && i < SPLIT_COUNT; i++)
        in->path[in->n++] = path_join(data, prepared_ids_files[i]);
    for (int i = 0; !corpus && i < 2; i++)
        in->path[in->n++] = path_join(data, prepare_bpe_files[i]);
}

static void inputs_free(Inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->path[i]);
}

static int not_input(const char *path, const Inputs *in, Err *e)
{
    return file_check_not_input(path, "-o", (const char *const *)in->path, in->n, e);
}

/* One output path: not an input, and absent or of its kind. */
static int check_output(const char *path, Kind k, const Inputs *in, Err *e)
{
    if (not_input(path, in, e) != 0)
        return -1;
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return err_set(e, "%s: %s", path, strerror(errno));
    }
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        return err_set(e, "%s: exists and is not %s (a broken symbolic link); refusing to replace it; "
                          "choose another -o", path, kind_names[k]);
    if (!is_kind(path, &st, k))
        return err_set(e, "%s: exists and is not %s; refusing to replace it; choose another -o", path,
                       kind_names[k]);
    return 0;
}

/* The checkpoints a run may write, MODEL.ckpt.STEP (--keep-checkpoints): every file
   of that pattern beside MODEL must be a model file and not an input, so that a run is
   not stopped at its first kept checkpoint by a file it may not replace. */
static int check_checkpoints(const char *model, const Inputs *in, Err *e)
{
    char *dir = path_dir(model);
    const char *slash = strrchr(model, '/');
    const char *base = slash ? slash + 1 : model;
    size_t bl = strlen(base);
    int rc = 0;
    DIR *d = opendir(dir);
    for (struct dirent *de; rc == 0 && d && (de = readdir(d));) {
        const char *name = de->d_name;
        if (strncmp(name, base, bl) != 0 || strncmp(name + bl, ".ckpt.", 6) != 0)
            continue;
        const char *num = name + bl + 6;
        if (!*num || strspn(num, "0123456789") != strlen(num))
            continue;
        char *path = path_join(dir, name);
        rc = check_output(path, KIND_MODEL, in, e);
        free(path);
    }
    if (d)
        closedir(d);
    free(dir);
    return rc;
}

static int check_all(const char *model, const Inputs *in, bool corpus, bool resume, bool force, Err *e)
{
    static const struct {
        const char *suffix;
        Kind kind;
    } outs[] = {{"", KIND_MODEL}, {".last", KIND_MODEL}, {".state", KIND_STATE}, {".log.jsonl", KIND_LOG}};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof outs / sizeof outs[0]; i++) {
        char *p = path_suffixed(model, outs[i].suffix);
        rc = check_output(p, outs[i].kind, in, e);
        free(p);
    }
    if (rc == 0)
        rc = check_checkpoints(model, in, e);
    if (rc == 0 && corpus) {
        /* MODEL.d/ and the files prepare writes there */
        char *dir = path_suffixed(model, ".d");
        rc = check_output(dir, KIND_PREPARED, in, e);
        for (int i = 0; rc == 0 && i < PREPARED_NFILES; i++) {
            char *p = path_join(dir, prepared_files[i]);
            rc = not_input(p, in, e);
            free(p);
        }
        for (int i = 0; rc == 0 && i < SPLIT_COUNT; i++) {
            char *p = path_join(dir, prepared_ids_files[i]);
            rc = not_input(p, in, e);
            free(p);
        }
        free(dir);
    }
    if (rc != 0)
        return -1;
    char *state = path_suffixed(model, ".state");
    struct stat st;
    bool have_state = stat(state, &st) == 0;
    if (!resume && !force && have_state)
        rc = err_set(e, "%s exists: add --resume to continue that run, or --force to start over", state);
    else if (resume && !have_state)
        rc = err_set(e, "%s: cannot resume: %s", state, strerror(errno));
    free(state);
    return rc;
}

/* The directory that will hold MODEL's files must take new files; created with its
   parents when missing (as prepare creates its output directory). */
static int check_writable_dir(const char *model, Err *e)
{
    char *dir = path_dir(model);
    struct stat st;
    int rc = 0;
    Err de;
    if (stat(dir, &st) != 0 && errno == ENOENT && dir_ensure_all(dir, &de) != 0)
        rc = err_set(e, "%s: cannot write there: %s", model, de.msg);
    else if (stat(dir, &st) != 0)
        rc = err_set(e, "%s: cannot write there: %s", model, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = err_set(e, "%s: cannot write there: %s", model, strerror(ENOTDIR));
    else if (access(dir, W_OK | X_OK) != 0)
        rc = err_set(e, "%s: cannot write there: %s", model, strerror(errno));
    free(dir);
    return rc;
}

int train_claim(TrainClaim *c, const char *model, const char *data, const char *base, bool resume, bool force,
                Err *e)
{
    c->lock.fd = -1;
    c->lock.path = NULL;
    if (check_writable_dir(model, e) != 0)
        return -1;
    struct stat st;
    bool corpus = !(stat(data, &st) == 0 && S_ISDIR(st.st_mode));
    Inputs in;
    inputs_of(&in, data, base, corpus);
    char *lock = path_suffixed(model, ".lock");
    long holder = 0;
    int got = not_input(lock, &in, e) != 0 ? -1 : file_lock(&c->lock, lock, &holder, e);
    if (got == 1) {
        if (holder > 0)
            err_set(e, "%s: another s2s train (process %ld) is writing this model; wait for it to end "
                       "or stop it (it holds %s)", model, holder, lock);
        else
            err_set(e, "%s: another s2s train is writing this model; wait for it to end or stop it "
                       "(it holds %s)", model, lock);
    }
    free(lock);
    if (got == 0 && check_all(model, &in, corpus, resume, force, e) != 0) {
        train_release(c);
        got = -1;
    }
    inputs_free(&in);
    return got == 0 ? 0 : -1;
}

void train_release(TrainClaim *c) { file_unlock(&c->lock); }
