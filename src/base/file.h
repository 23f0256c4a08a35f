/* Whole-file reads and crash-safe writes. */
#ifndef S2S_BASE_FILE_H
#define S2S_BASE_FILE_H

#include <stdio.h>
#include <stddef.h>
#include "base/err.h"

/* Reads the whole file into a NUL-terminated buffer ("-" is stdin). */
int file_read_all(const char *path, char **data, size_t *len, Err *e);

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

/* Creates a directory if it does not exist (one level). */
int dir_ensure(const char *path, Err *e);
/* Joins dir and name with a '/'; the caller frees the result. */
char *path_join(const char *dir, const char *name);

#endif
