/*
 * gzip input (zlib). A file whose name ends in ".gz", or whose first bytes are gzip's
 * magic number (1f 8b), is decompressed whole; concatenated members (`cat a.gz b.gz`)
 * are read one after another. A damaged, truncated or foreign file is one error line
 * that names it: "FILE: corrupt gzip data (DETAIL)".
 */
#ifndef S2S_BASE_GZIP_H
#define S2S_BASE_GZIP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* Whether data[0..len) starts with the gzip magic number. */
bool gz_magic(const void *data, size_t len);

/* Decompresses in[0..n) into a fresh NUL-terminated buffer (*out, *out_len). name is
   used in messages. On error nothing is allocated. */
int gz_inflate(const char *name, const void *in, size_t n, char **out, size_t *out_len, Err *e);

/* file_read_lines (base/file.h), or file_read_all for a gzip file, decompressed as above. */
int file_read_text(const char *path, char **data, size_t *len, Err *e);

#endif
