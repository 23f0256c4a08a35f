/* Whole-file reads and crash-safe writes. */
#ifndef S2S_BASE_FILE_H
#define S2S_BASE_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include "base/err.h"

/* Reads the whole file into a NUL-terminated buffer ("-" is stdin). */
int file_read_all(const char *path, char **data, size_t *len, Err *e);

/* The longest line a text file may have (bytes, without its newline): 16 MiB, far
   beyond any sentence (a corpus line of 10 MB is still read, and dropped by --max-len). */
#define FILE_MAX_LINE (1 << 24)
/* Reads a text file as file_read_all does, but bounded: reading stops after the 64 KiB
   chunk in which a NUL byte appears (the data then ends there; the caller's parser
   names the line of the NUL, which no text file holds), and a line longer than
   FILE_MAX_LINE is an error "PATH:LINE: a line longer than ..." ("<stdin>" for "-").
   A file that starts with a gzip header is read whole (the caller inflates it). */
int file_read_lines(const char *path, char **data, size_t *len, Err *e);

/*
 * A file written to PATH.tmp.PID in the same directory and renamed over PATH
 * only on commit, after fsync of the file and before fsync of the directory.
 * Until commit, PATH keeps its old contents; abort removes the temporary.
 */
typedef struct AtomicFile {
    FILE *fp;
    char *path;
    char *tmp;
} AtomicFile;

int atomic_open(AtomicFile *af, const char *path, Err *e);
int atomic_commit(AtomicFile *af, Err *e);
void atomic_abort(AtomicFile *af);
/* Writes len bytes to path atomically. */
int atomic_write(const char *path, const void *data, size_t len, Err *e);

/* True when both paths exist and are the same file: the same device and inode after
   following symbolic links, so "x", "./x", a hard link and a symlink to x all match. */
bool file_same(const char *a, const char *b);

/* Refuses (one line, "OUT: WHAT would overwrite the input IN (the same file); nothing
   written") when out is the same file as any of the n inputs (NULL entries skipped). */
int file_check_not_input(const char *out, const char *what, const char *const *inputs, size_t n,
                         Err *e);

/* Whether an output of a filter (`translate -o`, `eval --out`) may be written to out:
   it is absent, or a regular file that holds text (no NUL byte in its first 4 KiB:
   model files, states and other binary files are refused) and is not the same file as
   any of the n inputs. what names the option in the message. Nothing is written. */
int file_check_text_output(const char *out, const char *what, const char *const *inputs,
                           size_t n, Err *e);

/* The first bytes of a file (at most cap - 1, NUL-terminated): the count read, or -1
   when it cannot be opened or read. */
long file_head(const char *path, char *dst, size_t cap);

/*
 * An advisory lock on a file (flock), held until file_unlock or the end of the
 * process: a lock left by a killed process does not block. The file holds the
 * holder's process id. file_lock returns 0 when taken, 1 when another process holds
 * it (*holder: its id as written, 0 if unknown), -1 with e set when the file cannot
 * be used (it exists and is not a lock file of ours: anything but a process id line
 * or empty). file_unlock removes the file and releases the lock.
 */
typedef struct FileLock {
    int fd;      /* -1 when not held */
    char *path;
} FileLock;

int file_lock(FileLock *l, const char *path, long *holder, Err *e);
void file_unlock(FileLock *l);

/* Creates a directory if it does not exist (one level). */
int dir_ensure(const char *path, Err *e);
/* Creates a directory and its missing parents (mkdir -p). */
int dir_ensure_all(const char *path, Err *e);
/* Joins dir and name with a '/'; the caller frees the result. */
char *path_join(const char *dir, const char *name);
/* path followed by suffix ("m.s2s" ".state"); the caller frees the result. */
char *path_suffixed(const char *path, const char *suffix);
/* The directory that holds path: "." for "x", "/" for "/x"; the caller frees it. */
char *path_dir(const char *path);

/* A read-only mapping of the file at path that someone else may truncate while it is in
   use: an access to a page past the new end (SIGBUS) then ends the process with exit 1
   and one line, "s2s: PATH: the file was truncated while in use; AFTER" (after: what
   the user should know, such as "nothing written"), instead of a crash. At most 64
   mappings are watched at once (more are unwatched). Only once file_map_watch_enable
   was called: a program turns it on (src/main.c); the library (include/s2s.h) installs
   no signal handler, so there a truncated mapping raises SIGBUS. */
void file_map_watch(const void *base, size_t len, const char *path, const char *after);
void file_map_watch_enable(void);
/* Stops watching the mapping at base and unmaps it. */
void file_unmap(void *base, size_t len);

#endif
