#!/usr/bin/python3
"""Reads and writes safetensors files with torch alone (no `safetensors` package).

The format is the one of src/base/safetensors.c: an 8-byte little-endian header
length N, N bytes of UTF-8 JSON header, then the data section. The header maps
tensor names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative
to the data section, which the tensors cover exactly) and may hold "__metadata__",
an object of string values.

    load(path) -> (tensors: dict name -> torch.Tensor, metadata: dict str -> str)
    save(path, tensors, metadata=None)

save() writes like the C writer: tensors in order of decreasing element size
(stable), header padded with spaces so the data section starts at a multiple of 8,
metadata "s2s.crc32" = CRC-32 of the data section (8 lowercase hex digits), and the
file replaced atomically. load() checks "s2s.crc32" when present.

Command line (run with /usr/bin/python3, which has torch; exit status 77 when
torch cannot be imported):
    safetensors_io.py --dump FILE          list tensors and metadata; exit 1 on a bad file
    safetensors_io.py --selftest IN OUT    checks IN (written by tests/unit/
                                           test_safetensors_torch.c) and writes OUT
"""

import json
import os
import struct
import sys
import zlib

try:
    import torch
except ImportError as _exc:
    if __name__ == "__main__":
        # Exit status 77 tells the C test suite to report the test as skipped.
        print(f"torch not installed: {sys.executable}: {_exc}", file=sys.stderr)
        sys.exit(77)
    raise

MAX_HEADER = 100_000_000
KEY_CRC32 = "s2s.crc32"
KEY_FORMAT = "s2s.format"

_DTYPES = {
    "BOOL": torch.bool,
    "U8": torch.uint8,
    "I8": torch.int8,
    "I16": torch.int16,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I32": torch.int32,
    "F32": torch.float32,
    "I64": torch.int64,
    "F64": torch.float64,
}
_NAMES = {v: k for k, v in _DTYPES.items()}
# Dtypes of the format that this torch has no type for.
_UNSUPPORTED = {"U16": 2, "U32": 4, "U64": 8, "F8_E5M2": 1, "F8_E4M3": 1}
_SIZES = {k: torch.empty(0, dtype=v).element_size() for k, v in _DTYPES.items()}
_SIZES.update(_UNSUPPORTED)

if sys.byteorder != "little":
    raise ImportError("safetensors_io: tensor data is little-endian; this host is not")


class FormatError(ValueError):
    """A file that is not a valid safetensors file; the message names the file."""


def _no_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError(f"duplicate key {k!r}")
        obj[k] = v
    return obj


def _not_json(word):
    raise ValueError(f"{word} is not JSON")


def _is_uint(x):
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def load(path):
    """Returns (tensors, metadata) of the safetensors file at path; raises FormatError."""
    with open(path, "rb") as fp:
        raw = fp.read()

    def fail(msg):
        raise FormatError(f"{path}: {msg}")

    if len(raw) < 8:
        fail("truncated: no header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > MAX_HEADER:
        fail(f"header length {n} is absurd (more than {MAX_HEADER} bytes)")
    if n > len(raw) - 8:
        fail(f"truncated: the header length says {n} bytes but only {len(raw) - 8} follow")
    try:
        header = json.loads(raw[8:8 + n].decode("utf-8"), object_pairs_hook=_no_duplicates,
                            parse_constant=_not_json)
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError included
        fail(f"header: {exc}")
    if not isinstance(header, dict):
        fail("the header is not a JSON object")
    meta = header.pop("__metadata__", {})
    if not isinstance(meta, dict):
        fail("__metadata__ is not an object")
    for k, v in meta.items():
        if not isinstance(v, str):
            fail(f"metadata {k!r} is not a string")
    data = memoryview(raw)[8 + n:]

    spans = []
    infos = {}
    for name, info in header.items():
        if not isinstance(info, dict):
            fail(f"tensor {name!r} is not an object")
        extra = set(info) - {"dtype", "shape", "data_offsets"}
        if extra:
            fail(f"tensor {name!r}: unknown field {sorted(extra)[0]!r}")
        for field in ("dtype", "shape", "data_offsets"):
            if field not in info:
                fail(f"tensor {name!r}: missing {field}")
        dtype, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str) or dtype not in _SIZES:
            fail(f"tensor {name!r}: unknown dtype {dtype!r}")
        if not isinstance(shape, list) or not all(_is_uint(d) for d in shape):
            fail(f"tensor {name!r}: shape is not a list of non-negative integers")
        if not isinstance(offs, list) or len(offs) != 2 or not all(_is_uint(o) for o in offs):
            fail(f"tensor {name!r}: data_offsets is not a pair of non-negative integers")
        begin, end = offs
        if begin > end:
            fail(f"tensor {name!r}: data_offsets {offs} end before they begin")
        numel = 1
        for d in shape:
            numel *= d
        if numel * _SIZES[dtype] != end - begin:
            fail(f"tensor {name!r}: shape {shape} of {dtype} needs {numel * _SIZES[dtype]} "
                 f"bytes but data_offsets {offs} hold {end - begin}")
        if end > len(data):
            fail(f"tensor {name!r}: data_offsets {offs} go beyond the data section "
                 f"({len(data)} bytes; truncated file?)")
        spans.append((begin, end, name))
        infos[name] = (dtype, shape, begin, end)
    spans.sort()
    cursor = 0
    prev = None
    for begin, end, name in spans:
        if begin < cursor:
            fail(f"tensors {prev!r} and {name!r} overlap")
        if begin > cursor:
            fail(f"data section bytes [{cursor}, {begin}) belong to no tensor")
        cursor, prev = end, name
    if cursor != len(data):
        fail(f"data section bytes [{cursor}, {len(data)}) belong to no tensor")
    if KEY_CRC32 in meta:
        want = meta[KEY_CRC32]
        if len(want) != 8 or any(c not in "0123456789abcdefABCDEF" for c in want):
            fail(f"metadata {KEY_CRC32} {want!r} is not 8 hex digits")
        if zlib.crc32(data) != int(want, 16):
            fail("checksum mismatch: the file is corrupted")

    tensors = {}
    for name, (dtype, shape, begin, end) in infos.items():
        if dtype in _UNSUPPORTED:
            fail(f"tensor {name!r}: dtype {dtype} has no torch type here")
        tdt = _DTYPES[dtype]
        if begin == end:
            tensors[name] = torch.empty(shape, dtype=tdt)
        else:
            tensors[name] = torch.frombuffer(bytearray(data[begin:end]), dtype=tdt).reshape(shape)
    return tensors, meta


def _tensor_bytes(t):
    flat = t.detach().cpu().contiguous().reshape(-1)
    if flat.dtype == torch.bfloat16:
        flat = flat.view(torch.int16)
    return flat.numpy().tobytes()


def save(path, tensors, metadata=None):
    """Writes tensors (dict name -> torch.Tensor) and metadata (dict str -> str) to path."""
    metadata = dict(metadata or {})
    if KEY_CRC32 in metadata:
        raise ValueError(f"{path}: metadata key {KEY_CRC32!r} is reserved: save() computes it")
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ValueError(f"{path}: metadata {k!r}: keys and values must be strings")
    items = []
    for name, t in tensors.items():
        if not isinstance(name, str) or not name or name == "__metadata__":
            raise ValueError(f"{path}: bad tensor name {name!r}")
        if t.dtype not in _NAMES:
            raise ValueError(f"{path}: tensor {name!r}: dtype {t.dtype} is not supported")
        items.append((name, t))
    items.sort(key=lambda it: -it[1].element_size())  # stable: decreasing element size

    header = {}
    chunks = []
    off = 0
    crc = 0
    for name, t in items:
        b = _tensor_bytes(t)
        header[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(b)]}
        off += len(b)
        crc = zlib.crc32(b, crc)
        chunks.append(b)
    metadata[KEY_CRC32] = f"{crc:08x}"
    text = json.dumps({"__metadata__": metadata, **header}, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)

    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "wb") as fp:
            fp.write(struct.pack("<Q", len(text)))
            fp.write(text)
            for b in chunks:
                fp.write(b)
            fp.flush()
            os.fsync(fp.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---- self test shared with tests/unit/test_safetensors_torch.c ----------------

SELFTEST_FORMAT = "s2s-selftest-1"
SELFTEST_NOTE = "h\u00e9llo w\u00f6rld \u2713 \U0001d11e"
# name -> (dtype, shape); the values follow selftest_value() in element order.
SELFTEST_SPEC = {
    "enc.w": ("F32", [3, 5]),
    "dec.b": ("F32", [7]),
    "scalar": ("F32", []),
    "empty": ("F32", [0, 4]),
    "mask": ("U8", [5]),
    "ids": ("I32", [2, 3]),
    "step": ("I64", [2]),
    "big": ("F64", [3]),
}


def selftest_value(dtype, i):
    """Element i of a self-test tensor of this dtype (exact in every type)."""
    if dtype in ("F32", "F64"):
        return (i * 37 % 101) * 0.25 - 12.5
    if dtype == "U8":
        return i * 13 % 256
    if dtype == "I32":
        return i * 7919 - 40000
    if dtype == "I64":
        return (i + 1) * (1 << 40) + i
    raise ValueError(dtype)


def selftest(src, dst):
    tensors, meta = load(src)
    if meta.get(KEY_FORMAT) != SELFTEST_FORMAT:
        raise SystemExit(f"selftest: {src}: format {meta.get(KEY_FORMAT)!r}")
    if meta.get("note") != SELFTEST_NOTE:
        raise SystemExit(f"selftest: {src}: note {meta.get('note')!r}")
    if set(tensors) != set(SELFTEST_SPEC):
        raise SystemExit(f"selftest: {src}: tensors {sorted(tensors)}")
    out = {}
    for name, (dtype, shape) in SELFTEST_SPEC.items():
        t = tensors[name]
        if t.dtype != _DTYPES[dtype] or list(t.shape) != shape:
            raise SystemExit(f"selftest: {name}: {t.dtype} {list(t.shape)}, "
                             f"expected {dtype} {shape}")
        want = torch.tensor([selftest_value(dtype, i) for i in range(t.numel())],
                            dtype=t.dtype).reshape(shape)
        if not torch.equal(t, want):
            raise SystemExit(f"selftest: {name}: values differ: {t} vs {want}")
        out[name] = t * 2 + 1 if t.is_floating_point() else t + 1
    out["py.arange"] = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out["py.f64"] = torch.tensor([0.1, 1e300, -2.5e-300], dtype=torch.float64)
    save(dst, out, {KEY_FORMAT: SELFTEST_FORMAT, "note": SELFTEST_NOTE + " (torch)",
                    "torch": torch.__version__})
    print(f"selftest ok: {len(tensors)} tensors checked, {len(out)} written")


def main(argv):
    try:
        if len(argv) == 3 and argv[0] == "--selftest":
            selftest(argv[1], argv[2])
            return 0
        if len(argv) == 2 and argv[0] == "--dump":
            tensors, meta = load(argv[1])
            for k, v in meta.items():
                print(f"meta {k} = {v}")
            for name, t in tensors.items():
                print(f"{name} {_NAMES[t.dtype]} {list(t.shape)}")
            return 0
    except (OSError, ValueError) as exc:
        print(f"safetensors_io: {exc}", file=sys.stderr)
        return 1
    print("usage: safetensors_io.py --dump FILE | --selftest IN OUT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
