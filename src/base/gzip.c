#include "base/gzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/buf.h"
#include "base/file.h"

bool gz_magic(const void *data, size_t len)
{
    const uint8_t *p = data;
    return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

int gz_inflate(const char *name, const void *in, size_t n, char **out, size_t *out_len, Err *e)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK) /* gzip wrapper only */
        BUG("inflateInit2 failed");
    Buf b = {0};
    buf_reserve(&b, n * 4 + 64);
    const uint8_t *src = in;
    size_t left = n;
    const char *detail = NULL;
    if (n == 0)
        detail = "empty file";
    while (!detail) {
        /* avail_in is a uInt: feed at most 1 GiB at a time */
        if (z.avail_in == 0 && left > 0) {
            z.next_in = (Bytef *)src;
            z.avail_in = left > (1u << 30) ? 1u << 30 : (uInt)left;
            src += z.avail_in;
            left -= z.avail_in;
        }
        buf_reserve(&b, 1 << 16);
        size_t room = b.cap - b.len - 1;
        z.next_out = (Bytef *)b.data + b.len;
        z.avail_out = room > (1u << 30) ? 1u << 30 : (uInt)room;
        uInt before = z.avail_out;
        int rc = inflate(&z, Z_NO_FLUSH);
        b.len += before - z.avail_out;
        if (rc == Z_STREAM_END) {
            if (z.avail_in == 0 && left == 0)
                break;
            /* another member follows; anything else is damage */
            uint8_t next[2];
            size_t k = 0;
            for (size_t i = 0; i < z.avail_in && k < 2; i++)
                next[k++] = z.next_in[i];
            for (size_t i = 0; i < left && k < 2; i++)
                next[k++] = src[i];
            if (!gz_magic(next, k))
                detail = "trailing data after the compressed stream";
            else if (inflateReset(&z) != Z_OK)
                BUG("inflateReset failed");
        } else if (rc == Z_BUF_ERROR && z.avail_in == 0 && left == 0) {
            detail = "unexpected end of file";
        } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR) {
            detail = z.msg ? z.msg : "invalid data";
        } else if (rc == Z_MEM_ERROR) {
            die("out of memory");
        }
    }
    inflateEnd(&z);
    if (detail) {
        buf_free(&b);
        return err_set(e, "%s: corrupt gzip data (%s)", name, detail);
    }
    b.data[b.len] = '\0';
    *out_len = b.len;
    *out = buf_take(&b);
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int file_read_text(const char *path, char **data, size_t *len, Err *e)
{
    char *raw;
    size_t n;
    if ((ends_with(path, ".gz") ? file_read_all : file_read_lines)(path, &raw, &n, e) != 0)
        return -1;
    if (!ends_with(path, ".gz") && !gz_magic(raw, n)) {
        *data = raw;
        *len = n;
        return 0;
    }
    int rc = gz_inflate(strcmp(path, "-") == 0 ? "<stdin>" : path, raw, n, data, len, e);
    free(raw);
    return rc;
}
