#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"

int file_read_all(const char *path, char **data, size_t *len, Err *e)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *fp = is_stdin ? stdin : fopen(path, "rb");
    if (!fp)
        return err_set(e, "%s: cannot open: %s", path, strerror(errno));
    Buf b = {0};
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        buf_append(&b, chunk, n);
    int bad = ferror(fp);
    int saved = errno;
    if (!is_stdin)
        fclose(fp);
    if (bad) {
        buf_free(&b);
        return err_set(e, "%s: read error: %s", path, strerror(saved));
    }
    *len = b.len;
    *data = buf_take(&b);
    return 0;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

int atomic_open(AtomicFile *af, const char *path, Err *e)
{
    Buf tmp = {0};
    buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
    af->path = xstrdup(path);
    af->tmp = buf_take(&tmp);
    af->fp = fopen(af->tmp, "wb");
    if (!af->fp) {
        int saved = errno;
        free(af->path);
        free(af->tmp);
        af->path = af->tmp = NULL;
        return err_set(e, "%s: cannot write: %s", path, strerror(saved));
    }
    return 0;
}

int atomic_commit(AtomicFile *af, Err *e)
{
    int rc = 0;
    int bad = ferror(af->fp);
    if (fflush(af->fp) != 0 || bad)
        rc = err_set(e, "%s: write failed: %s", af->path, strerror(errno ? errno : EIO));
    else if (fsync(fileno(af->fp)) != 0)
        rc = err_set(e, "%s: fsync failed: %s", af->path, strerror(errno));
    if (fclose(af->fp) != 0 && rc == 0)
        rc = err_set(e, "%s: write failed: %s", af->path, strerror(errno));
    af->fp = NULL;
    if (rc == 0 && rename(af->tmp, af->path) != 0)
        rc = err_set(e, "%s: cannot replace: %s", af->path, strerror(errno));
    if (rc != 0) {
        unlink(af->tmp);
    } else {
        char *dir = dir_of(af->path);
        int fd = open(dir, O_RDONLY | O_DIRECTORY);
        if (fd >= 0) {
            fsync(fd);
            close(fd);
        }
        free(dir);
    }
    free(af->path);
    free(af->tmp);
    af->path = af->tmp = NULL;
    return rc;
}

void atomic_abort(AtomicFile *af)
{
    if (af->fp)
        fclose(af->fp);
    if (af->tmp)
        unlink(af->tmp);
    free(af->path);
    free(af->tmp);
    af->fp = NULL;
    af->path = af->tmp = NULL;
}

int atomic_write(const char *path, const void *data, size_t len, Err *e)
{
    AtomicFile af;
    if (atomic_open(&af, path, e) != 0)
        return -1;
    if (len && fwrite(data, 1, len, af.fp) != len) {
        int saved = errno;
        atomic_abort(&af);
        return err_set(e, "%s: write failed: %s", path, strerror(saved));
    }
    return atomic_commit(&af, e);
}

int dir_ensure(const char *path, Err *e)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return err_set(e, "%s: exists and is not a directory", path);
        return 0;
    }
    if (mkdir(path, 0777) != 0)
        return err_set(e, "%s: cannot create directory: %s", path, strerror(errno));
    return 0;
}

char *path_join(const char *dir, const char *name)
{
    Buf b = {0};
    size_t n = strlen(dir);
    buf_puts(&b, dir);
    if (n && dir[n - 1] != '/')
        buf_putc(&b, '/');
    buf_puts(&b, name);
    return buf_take(&b);
}
