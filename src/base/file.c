#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"

/* The bytes of path ("-": stdin), whole. With text, unless the first bytes are a gzip
   header, reading stops after the chunk in which a NUL byte appears (the caller's
   parser then names its line) and at a line longer than FILE_MAX_LINE bytes (an error
   here), so that /dev/zero or a binary file is refused after a bounded read. */
static int read_all(const char *path, bool text, char **data, size_t *len, Err *e)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *fp = is_stdin ? stdin : fopen(path, "rb");
    if (!fp)
        return err_set(e, "%s: cannot open: %s", path, strerror(errno));
    Buf b = {0};
    char chunk[1 << 16];
    size_t n, line = 0, lineno = 1;
    int rc = 0;
    while (rc == 0 && (n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        if (b.len == 0 && n >= 2 && (unsigned char)chunk[0] == 0x1f && (unsigned char)chunk[1] == 0x8b)
            text = false; /* gzip: decompressed and checked by the caller */
        buf_append(&b, chunk, n);
        if (!text)
            continue;
        bool nul = false;
        for (size_t k = 0; k < n && rc == 0; k++) {
            if (chunk[k] == '\n') {
                line = 0;
                lineno++;
            } else if (++line > FILE_MAX_LINE) {
                rc = err_set(e, "%s:%zu: a line longer than %d bytes (not a text file?)", name, lineno,
                             FILE_MAX_LINE);
            }
            nul |= chunk[k] == '\0';
        }
        if (nul)
            break;
    }
    int bad = rc == 0 && ferror(fp);
    int saved = errno;
    if (!is_stdin)
        fclose(fp);
    if (bad)
        rc = err_set(e, "%s: read error: %s", path, strerror(saved));
    if (rc != 0) {
        buf_free(&b);
        return -1;
    }
    *len = b.len;
    *data = buf_take(&b);
    return 0;
}

int file_read_all(const char *path, char **data, size_t *len, Err *e)
{
    return read_all(path, false, data, len, e);
}

int file_read_lines(const char *path, char **data, size_t *len, Err *e)
{
    return read_all(path, true, data, len, e);
}

char *path_dir(const char *path)
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
        char *dir = path_dir(af->path);
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

bool file_same(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

long file_head(const char *path, char *dst, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, dst + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    dst[n] = '\0';
    return (long)n;
}

int file_check_not_input(const char *out, const char *what, const char *const *inputs, size_t n,
                         Err *e)
{
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && file_same(out, inputs[i]))
            return err_set(e, "%s: %s would overwrite the input %s (the same file); nothing written", out,
                           what, inputs[i]);
    return 0;
}

int file_check_text_output(const char *out, const char *what, const char *const *inputs,
                           size_t n, Err *e)
{
    struct stat st;
    if (stat(out, &st) != 0)
        return 0; /* absent: nothing to lose */
    if (file_check_not_input(out, what, inputs, n, e) != 0)
        return -1;
    if (!S_ISREG(st.st_mode))
        return err_set(e, "%s: %s exists and is not a regular file; nothing written", out, what);
    char head[4097];
    long got = file_head(out, head, sizeof head);
    if (got < 0)
        return err_set(e, "%s: cannot read: %s", out, strerror(errno));
    if (memchr(head, '\0', (size_t)got))
        return err_set(e, "%s: %s exists and is not a text file (a model or other binary file); "
                          "refusing to replace it", out, what);
    return 0;
}

/* A lock file of ours holds nothing or one process id line. */
static bool lock_text(const char *s, long n, long *pid)
{
    long i = 0, v = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9' && v < 100000000)
        v = v * 10 + (s[i++] - '0');
    if (i < n && s[i] == '\n')
        i++;
    *pid = v;
    return i == n && (n == 0 || v > 0);
}

int file_lock(FileLock *l, const char *path, long *holder, Err *e)
{
    l->fd = -1;
    l->path = NULL;
    *holder = 0;
    for (int attempt = 0; attempt < 64; attempt++) {
        struct stat st;
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return err_set(e, "%s: exists and is not an s2s lock file; refusing to use it", path);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0)
            return err_set(e, "%s: cannot open: %s", path, strerror(errno));
        char text[64];
        ssize_t got = pread(fd, text, sizeof text, 0);
        long pid = 0;
        if (fstat(fd, &st) != 0 || got < 0 || !lock_text(text, (long)got, &pid)) {
            close(fd);
            return err_set(e, "%s: exists and is not an s2s lock file; refusing to use it", path);
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            close(fd);
            if (err == EWOULDBLOCK) {
                *holder = pid;
                return 1;
            }
            return err_set(e, "%s: cannot lock: %s", path, strerror(err));
        }
        /* The holder before us may have removed the file between our open and our lock:
           then the lock is on a file nobody else will see; take the new one instead. */
        struct stat now;
        if (stat(path, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
            close(fd);
            continue;
        }
        char line[32];
        int len = snprintf(line, sizeof line, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len) {
            int err = errno;
            close(fd);
            return err_set(e, "%s: cannot write: %s", path, strerror(err));
        }
        l->fd = fd;
        l->path = xstrdup(path);
        return 0;
    }
    return err_set(e, "%s: cannot lock: the file keeps being replaced", path);
}

void file_unlock(FileLock *l)
{
    if (l->fd >= 0) {
        unlink(l->path);
        close(l->fd);
    }
    free(l->path);
    l->fd = -1;
    l->path = NULL;
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

int dir_ensure_all(const char *path, Err *e)
{
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1; *s && rc == 0; s++) {
        if (*s != '/' || s[-1] == '/')
            continue;
        *s = '\0';
        struct stat st;
        if (stat(p, &st) != 0 && mkdir(p, 0777) != 0 && errno != EEXIST)
            rc = err_set(e, "%s: cannot create directory: %s", p, strerror(errno));
        *s = '/';
    }
    free(p);
    return rc == 0 ? dir_ensure(path, e) : rc;
}

char *path_suffixed(const char *path, const char *suffix)
{
    Buf b = {0};
    buf_puts(&b, path);
    buf_puts(&b, suffix);
    return buf_take(&b);
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

/* Watched mappings, for the SIGBUS handler: a page of a mapping past the file's end
   (the file was truncated by someone else while in use) raises SIGBUS on access; the
   handler names the file and exits 1 instead of crashing. */
enum { MAP_SLOTS = 64 };
static struct {
    const unsigned char *base;
    size_t len;
    char msg[400];
    size_t msg_len;
} map_slot[MAP_SLOTS];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    const unsigned char *a = si->si_addr;
    static const char generic[] = "s2s: a mapped file was truncated while in use\n";
    for (int i = 0; i < MAP_SLOTS; i++)
        if (map_slot[i].base && a >= map_slot[i].base && a < map_slot[i].base + map_slot[i].len) {
            (void)!write(2, map_slot[i].msg, map_slot[i].msg_len);
            _exit(1);
        }
    (void)!write(2, generic, sizeof generic - 1);
    _exit(1);
}

static atomic_bool watch_on;

void file_map_watch_enable(void) { atomic_store(&watch_on, true); }

void file_map_watch(const void *base, size_t len, const char *path, const char *after)
{
    static bool installed;
    if (!atomic_load(&watch_on))
        return;
    pthread_mutex_lock(&map_lock);
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, NULL);
        installed = true;
    }
    for (int i = 0; i < MAP_SLOTS; i++)
        if (!map_slot[i].base) {
            int n = snprintf(map_slot[i].msg, sizeof map_slot[i].msg,
                             "s2s: %s: the file was truncated while in use; %s\n", path, after);
            size_t cap = sizeof map_slot[i].msg;
            map_slot[i].msg_len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
            map_slot[i].len = len;
            map_slot[i].base = base;
            break;
        }
    pthread_mutex_unlock(&map_lock);
}

void file_unmap(void *base, size_t len)
{
    pthread_mutex_lock(&map_lock);
    for (int i = 0; i < MAP_SLOTS; i++)
        if (map_slot[i].base == base)
            map_slot[i].base = NULL;
    pthread_mutex_unlock(&map_lock);
    munmap(base, len);
}
