/*
 * The safetensors file format (the one file a trained s2s model is; PyTorch opens
 * it with scripts/safetensors_io.py or the `safetensors` package):
 *
 *   8 bytes   N, the header length, unsigned little-endian
 *   N bytes   header: a UTF-8 JSON object
 *               {"__metadata__": {"key": "string value", ...},      (optional)
 *                "NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [B, E]}, ...}
 *             offsets are relative to the data section; E - B = product(shape) *
 *             dtype size; the tensors cover the data section exactly, no gap, no overlap
 *   rest      the data section, every tensor little-endian, row-major
 *
 * Writer (st_write):
 * - The data section holds the tensors in order of decreasing element size,
 *   keeping the caller's order among tensors of the same size (a file of F32
 *   tensors only is in exactly the caller's order); the header lists them in the
 *   same order, after "__metadata__". With the data section starting at a multiple
 *   of 8 this aligns every tensor to its element size.
 * - The header is padded with spaces so that the data section starts at a file
 *   offset that is a multiple of 8.
 * - Metadata: the caller's keys in the caller's order, then ST_KEY_CRC32 = CRC-32
 *   (base/crc32.h) of the whole data section as 8 lowercase hex digits. The caller
 *   names its kind of file with ST_KEY_FORMAT (models: ST_FORMAT_MODEL).
 * - Written through AtomicFile: an existing file at path is replaced only when the
 *   new one is complete and synced, and is left unchanged on any error.
 *
 * Reader (st_load): reads the whole file into memory (st_map maps it instead) and validates
 * everything before returning: header length, JSON syntax, types of every field,
 * dtypes, shapes, offsets, exact coverage of the data section, metadata values
 * being strings, ST_KEY_CRC32 when present, and ST_KEY_FORMAT when the caller asks
 * for a format. Every tensor's data pointer is aligned to its element size (a
 * tensor at a misaligned offset of a foreign file is copied), so F32 data can be
 * used as float *. Checks run in this order: header length, JSON, metadata,
 * format, each tensor entry (in header order), coverage, checksum. Errors are one
 * line starting with the path; byte offsets of JSON errors count from the start of
 * the header (file offset 8), e.g.
 *   model.st: truncated: no header length
 *   model.st: header: JSON: expected ',' or '}' at byte 120
 *   model.st: tensor 'enc.w': shape [3, 4] of F32 needs 48 bytes but data_offsets [0, 40] hold 40
 *   model.st: data section bytes [32, 48) belong to no tensor
 *   model.st: checksum mismatch: the file is corrupted
 *   model.st: not an s2s model (format 'foo-2', expected 's2s-model-1')
 * Names and metadata are C strings, so a "\u0000" in any of them is an error.
 *
 * Hosts are little-endian (checked at compile time).
 */
#ifndef S2S_BASE_SAFETENSORS_H
#define S2S_BASE_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* The dtypes of the format with whole-byte elements. */
typedef enum StDtype {
    ST_BOOL, ST_U8, ST_I8, ST_F8_E5M2, ST_F8_E4M3,
    ST_I16, ST_U16, ST_F16, ST_BF16,
    ST_I32, ST_U32, ST_F32,
    ST_I64, ST_U64, ST_F64,
    ST_NDTYPES
} StDtype;

#define ST_MAX_DIMS 8
/* Headers longer than this are refused as absurd (the reference implementation's limit). */
#define ST_MAX_HEADER 100000000ULL

#define ST_KEY_FORMAT "s2s.format"
#define ST_KEY_CRC32 "s2s.crc32"
#define ST_FORMAT_MODEL "s2s-model-1"

typedef struct StTensor {
    const char *name;
    StDtype dtype;
    int ndim;                     /* 0 (a scalar) .. ST_MAX_DIMS */
    int64_t shape[ST_MAX_DIMS];
    const void *data;             /* st_nbytes(t) bytes, row-major, little-endian */
} StTensor;

/* "F32" etc.; NULL for a value outside the enum. */
const char *st_dtype_name(StDtype d);
/* Bytes per element; 0 for a value outside the enum. */
size_t st_dtype_size(StDtype d);
/* The dtype named `name`, or -1. */
int st_dtype_parse(const char *name, StDtype *out);
/* Product of the shape (1 for a scalar). */
int64_t st_numel(const StTensor *t);
size_t st_nbytes(const StTensor *t);

/*
 * Writes n tensors and n_meta metadata entries (key meta_keys[i], value
 * meta_vals[i]; NULL arrays when n_meta is 0) to path atomically. Refuses (error,
 * nothing written) empty, duplicate or non-UTF-8 names, the name "__metadata__",
 * a bad dtype, ndim or negative dimension, missing data, duplicate metadata keys,
 * and ST_KEY_CRC32 among the caller's metadata (the writer computes it).
 */
int st_write(const char *path, const StTensor *tensors, size_t n, const char *const *meta_keys,
             const char *const *meta_vals, size_t n_meta, Err *e);

typedef struct StFile StFile;

/*
 * Reads and validates the file at path. expect_format: the value ST_KEY_FORMAT
 * must have, or NULL not to check. On success *out is an open file (st_close).
 */
int st_load(StFile **out, const char *path, const char *expect_format, Err *e);
/* The same, with the file mapped (read-only, private) instead of read into memory: no
   copy, and the tensors' data point into the mapping for as long as the file is open.
   The checks are st_load's, the checksum included. A file truncated by someone else
   while it is mapped makes the next access to a lost page end the process with one line
   naming the file (exit 1) instead of a crash. Both refuse anything but a regular
   file (a pipe, a device, a directory) without reading from it. */
int st_map(StFile **out, const char *path, const char *expect_format, Err *e);
/* Whether f was mapped by st_map (its tensors' data then live in the mapping). */
bool st_is_mapped(const StFile *f);
/* The same for a file already in memory (bytes are copied); name is used in messages. */
int st_parse(StFile **out, const char *name, const void *bytes, size_t len,
             const char *expect_format, Err *e);
void st_close(StFile *f);
/*
 * Whether the file at path is a safetensors file whose metadata names the format
 * `format` (ST_KEY_FORMAT), reading its header only: the kind of a file is known
 * without reading or checking its data. False for anything else (absent, unreadable,
 * not safetensors, another format).
 */
bool st_has_format(const char *path, const char *format);
/* Reads only the header of the file at path: vals[k] is a fresh copy of the metadata
   value of keys[k], or NULL when absent. Returns 0, or -1 with e set (cannot open, not
   safetensors, header not JSON). Neither the data nor its checksum is read: for what a
   file says about itself before it is loaded (st_load checks everything). */
int st_read_meta(const char *path, const char *const *keys, size_t n, char **vals, Err *e);

/* Tensors in header order. */
size_t st_count(const StFile *f);
const StTensor *st_at(const StFile *f, size_t i);
/* The tensor called name, or NULL. */
const StTensor *st_tensor(const StFile *f, const char *name);
/*
 * The tensor called name with exactly this dtype and shape, or NULL and an error:
 *   model.st: missing tensor 'enc.w'
 *   model.st: tensor 'enc.w' is F32 [3, 4], expected F32 [4, 3]
 */
const StTensor *st_expect(const StFile *f, const char *name, StDtype dtype, int ndim,
                          const int64_t *shape, Err *e);

/* Metadata in header order; st_meta returns the value of key, or NULL. */
size_t st_meta_count(const StFile *f);
const char *st_meta_key(const StFile *f, size_t i);
const char *st_meta_val(const StFile *f, size_t i);
const char *st_meta(const StFile *f, const char *key);

#endif
