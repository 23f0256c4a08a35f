"""s2s from Python: translate and score with libs2s (include/s2s.h) through ctypes.

    import s2s
    with s2s.Translator("enfr.s2s", beam=5) as tr:
        print(tr.translate(["I have a cat.", "Where is the station?"]))
    print(s2s.score(["The cat sat."], ["The cat sat down."]).bleu)

Nothing is compiled when the module is installed: it opens the shared library
libs2s.so.0 at import, from $S2S_LIBRARY when set (a path), else from the directory
`make install` put it in, else wherever the dynamic linker finds it.

Errors of the library raise s2s.Error, whose message is the library's (the text that
`s2s` prints after "s2s: ") and whose code is its status (ERR_ARGUMENT, ERR_MODEL,
ERR_INPUT). The library releases the GIL while it works, so threads of one process can
translate with one Translator at once (docs/library.md "Threads").
"""

from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Union

__all__ = [
    "Attention",
    "Constraints",
    "Error",
    "Evaluation",
    "Hypothesis",
    "ModelInfo",
    "Scores",
    "Tokenizer",
    "Translation",
    "Translator",
    "language_code",
    "language_name",
    "library_version",
    "score",
    "ERR_ARGUMENT",
    "ERR_MODEL",
    "ERR_OUTPUT",
    "ERR_INPUT",
]

__version__ = "0.2.0"

# s2s_status
ERR_ARGUMENT = 1
ERR_MODEL = 2
ERR_INPUT = 3
ERR_OUTPUT = 4

_PRECISIONS = {"int8": 0, "bf16": 1, "f32": 2}
_SIDES = {"source": 0, "target": 1}

# The directory `make install` put libs2s in (scripts/install.sh fills it in).
_INSTALLED_LIBDIR = "@LIBDIR@"


class Error(Exception):
    """An error of libs2s: str(e) and e.message are its message, e.code its status."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 1024)]


class _Options(ctypes.Structure):
    _fields_ = [
        ("beam", ctypes.c_int),
        ("nbest", ctypes.c_int),
        ("length_penalty", ctypes.c_double),
        ("max_len", ctypes.c_int),
        ("batch", ctypes.c_int),
        ("split", ctypes.c_int),
        ("copy_numbers", ctypes.c_int),
        ("replace_unk", ctypes.c_int),
        ("constraints", ctypes.c_int),
        ("attention", ctypes.c_int),
        ("attention_layer", ctypes.c_int),
        ("precision", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("glossary", ctypes.c_char_p),
        ("glossary_ignore_case", ctypes.c_int),
    ]


class _Attention(ctypes.Structure):
    _fields_ = [
        ("source_len", ctypes.c_int),
        ("output_len", ctypes.c_int),
        ("source", ctypes.POINTER(ctypes.c_char_p)),
        ("output", ctypes.POINTER(ctypes.c_char_p)),
        ("weights", ctypes.POINTER(ctypes.c_float)),
    ]


class _Constraints(ctypes.Structure):
    _fields_ = [
        ("require", ctypes.POINTER(ctypes.c_char_p)),
        ("nrequire", ctypes.c_int),
        ("avoid", ctypes.POINTER(ctypes.c_char_p)),
        ("navoid", ctypes.c_int),
        ("prefix", ctypes.c_char_p),
    ]


class _ModelInfo(ctypes.Structure):
    _fields_ = [
        ("arch", ctypes.c_char_p),
        ("direction", ctypes.c_char_p),
        ("source_lang", ctypes.c_char_p),
        ("target_lang", ctypes.c_char_p),
        ("keep_case", ctypes.c_int),
        ("source_vocab", ctypes.c_longlong),
        ("target_vocab", ctypes.c_longlong),
        ("source_merges", ctypes.c_longlong),
        ("target_merges", ctypes.c_longlong),
        ("parameters", ctypes.c_longlong),
        ("models", ctypes.c_int),
        ("config_json", ctypes.c_char_p),
        ("history_json", ctypes.c_char_p),
        ("attention_layers", ctypes.c_int),
        ("attention_heads", ctypes.c_int),
        ("tensors", ctypes.c_int),
    ]


class _ScoreOptions(ctypes.Structure):
    _fields_ = [
        ("tokenize", ctypes.c_char_p),
        ("lowercase", ctypes.c_int),
        ("chrf_lowercase", ctypes.c_int),
    ]


class _Scores(ctypes.Structure):
    _fields_ = [
        ("bleu", ctypes.c_double),
        ("precisions", ctypes.c_double * 4),
        ("brevity_penalty", ctypes.c_double),
        ("ratio", ctypes.c_double),
        ("hyp_len", ctypes.c_longlong),
        ("ref_len", ctypes.c_longlong),
        ("chrf", ctypes.c_double),
        ("bleu_signature", ctypes.c_char * 256),
        ("chrf_signature", ctypes.c_char * 256),
    ]


def _open_library() -> ctypes.CDLL:
    explicit = os.environ.get("S2S_LIBRARY")
    if explicit:
        return ctypes.CDLL(explicit)
    if not _INSTALLED_LIBDIR.startswith("@"):
        path = os.path.join(_INSTALLED_LIBDIR, "libs2s.so.0")
        if os.path.exists(path):
            return ctypes.CDLL(path)
    return ctypes.CDLL("libs2s.so.0")


_lib = _open_library()
_P = ctypes.c_void_p
_ERR = ctypes.POINTER(_Error)
_STRS = ctypes.POINTER(ctypes.c_char_p)


def _declare(name: str, restype: Any, *argtypes: Any) -> None:
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_declare("s2s_version", ctypes.c_char_p)
_declare("s2s_translator_options_default", _Options)
_declare("s2s_translator_load", _P, _STRS, ctypes.c_int, ctypes.POINTER(_Options), _ERR)
_declare("s2s_translator_free", None, _P)
_declare("s2s_translate", _P, _P, _STRS, ctypes.c_int, ctypes.POINTER(_Options), _ERR)
_declare(
    "s2s_translate_constrained", _P, _P, _STRS, ctypes.POINTER(_Constraints), ctypes.c_int, ctypes.POINTER(_Options), _ERR
)
_declare("s2s_attention_svg", _P, ctypes.POINTER(_Attention), ctypes.c_char_p)
_declare("s2s_language_code", ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p)
_declare("s2s_tokenizer_new", _P, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, _ERR)
_declare("s2s_tokenizer_free", None, _P)
_declare("s2s_tokenizer_tokenize", _P, _P, ctypes.c_char_p, ctypes.c_size_t, _ERR)
_declare("s2s_tokenizer_detokenize", _P, _P, ctypes.c_char_p, ctypes.c_size_t, _ERR)
_declare("s2s_join_units", _P, ctypes.c_char_p, ctypes.c_size_t, _ERR)
_declare("s2s_evaluate", _P, _P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_Options), _ERR)
_declare("s2s_evaluation_free", None, _P)
_declare("s2s_export_ctranslate2", ctypes.c_int, _P, ctypes.c_char_p, _ERR)
_declare("s2s_evaluation_report", ctypes.c_char_p, _P, ctypes.c_int)
_declare("s2s_evaluation_translations", ctypes.c_char_p, _P)
_declare("s2s_language_name", ctypes.c_char_p, ctypes.c_char_p)
_declare("s2s_result_free", None, _P)
_declare("s2s_result_count", ctypes.c_int, _P)
_declare("s2s_result_hypotheses", ctypes.c_int, _P, ctypes.c_int)
_declare("s2s_result_text", ctypes.c_char_p, _P, ctypes.c_int, ctypes.c_int)
_declare("s2s_result_score", ctypes.c_double, _P, ctypes.c_int, ctypes.c_int)
_declare("s2s_result_attention", ctypes.c_int, _P, ctypes.c_int, ctypes.POINTER(_Attention))
# returned strings are freed by s2s_string_free: kept as addresses, not c_char_p
_declare("s2s_tokenize", _P, _P, ctypes.c_int, ctypes.c_char_p, _ERR)
_declare("s2s_detokenize", _P, _P, ctypes.c_int, ctypes.c_char_p, _ERR)
_declare("s2s_string_free", None, _P)
_declare("s2s_translator_info", ctypes.POINTER(_ModelInfo), _P)
_declare("s2s_score_options_default", _ScoreOptions)
_declare(
    "s2s_score",
    ctypes.c_int,
    _STRS,
    ctypes.c_size_t,
    _STRS,
    ctypes.c_size_t,
    ctypes.POINTER(_ScoreOptions),
    ctypes.POINTER(_Scores),
    _ERR,
)


def library_version() -> str:
    """The version of the libs2s this module opened ("0.2.0")."""
    return _lib.s2s_version().decode()


def _raise(err: _Error) -> None:
    raise Error(err.code, err.message.decode("utf-8", "replace"))


def _encode(s: str) -> bytes:
    # lone surrogates pass as the invalid UTF-8 they stand for: the library names them
    return s.encode("utf-8", "surrogatepass")


def _strings(items: Sequence[str], name: str) -> "ctypes.Array[ctypes.c_char_p]":
    """items as a C array of UTF-8 strings; a NUL inside one is refused as the library
    refuses a line holding one."""
    if isinstance(items, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of str, not a single {type(items).__name__}")
    encoded = []
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise TypeError(f"{name}[{i}] must be str, not {type(s).__name__}")
        b = _encode(s)
        nul = b.find(b"\0")
        if nul >= 0:
            raise Error(ERR_INPUT, f"{name}:{i + 1}: NUL byte at byte {nul + 1}")
        encoded.append(b)
    return (ctypes.c_char_p * max(len(encoded), 1))(*encoded)


class Hypothesis(NamedTuple):
    """One translation of a text and its score: the length-normalised log-probability
    (`s2s translate --nbest` prints it with 6 decimals)."""

    text: str
    score: float


class Attention(NamedTuple):
    """The attention of a text's best translation: weights[t][j] is output token t's
    weight on source token j (each row sums to 1)."""

    source: List[str]
    output: List[str]
    weights: List[List[float]]

    def svg(self, title: str = "") -> Optional[str]:
        """The attention drawn as a standalone SVG document, as `s2s translate
        --attention-svg` draws it (title: its <title>); None without tokens."""
        ns, nt = len(self.source), len(self.output)
        if ns == 0 or nt == 0:
            return None
        src = _strings(self.source, "source")
        out = _strings(self.output, "output")
        w = (ctypes.c_float * (ns * nt))(*[x for row in self.weights for x in row])
        a = _Attention(ns, nt, src, out, w)
        p = _lib.s2s_attention_svg(ctypes.byref(a), _encode(title))
        if not p:
            return None
        try:
            return ctypes.string_at(p).decode()
        finally:
            _lib.s2s_string_free(p)


class Constraints(NamedTuple):
    """The constraints of one text (docs/constraints.md): phrases its translation must
    contain, phrases it must not, and the text it must start with."""

    require: Sequence[str] = ()
    avoid: Sequence[str] = ()
    prefix: Optional[str] = None


class Translation(NamedTuple):
    """A text's hypotheses, best first, and its attention when asked for."""

    hypotheses: List[Hypothesis]
    attention: Optional[Attention]

    @property
    def text(self) -> str:
        """The best translation."""
        return self.hypotheses[0].text

    @property
    def score(self) -> float:
        """The best translation's score."""
        return self.hypotheses[0].score


@dataclass(frozen=True)
class ModelInfo:
    """What `s2s info` shows of a model file."""

    arch: str
    direction: str
    source_lang: str
    target_lang: str
    keep_case: bool
    source_vocab: int
    target_vocab: int
    source_merges: int
    target_merges: int
    parameters: int
    models: int
    config: Dict[str, Any]
    history: Any
    attention_layers: int
    attention_heads: int


@dataclass(frozen=True)
class Scores:
    """What `s2s score` prints: corpus BLEU and chrF2 (0..100, unrounded)."""

    bleu: float
    precisions: List[float]
    brevity_penalty: float
    ratio: float
    hyp_len: int
    ref_len: int
    chrf: float
    bleu_signature: str
    chrf_signature: str


@dataclass(frozen=True)
class Evaluation:
    """What `s2s eval` reports of a test set: text (its text block), json (its JSON
    object, parsed), translations (one per line of the file)."""

    text: str
    json: Dict[str, Any]
    translations: List[str]


def _take_string(p: Optional[int], err: _Error) -> str:
    """The library's string p (freed here), or err raised when p is NULL."""
    if not p:
        _raise(err)
    try:
        return ctypes.string_at(p).decode()
    finally:
        _lib.s2s_string_free(p)


class Tokenizer:
    """The tokenizer of `s2s tokenize --lang LANG [--lowercase] [--bpe CODES]`, without a
    model. Raises Error (ERR_ARGUMENT for a language code, ERR_MODEL for codes that
    cannot be read)."""

    def __init__(self, lang: str = "en", *, lowercase: bool = False, bpe: Optional[Union[str, os.PathLike]] = None):
        err = _Error()
        codes = os.fsencode(bpe) if bpe is not None else None
        self._t = _lib.s2s_tokenizer_new(_encode(lang), int(lowercase), codes, ctypes.byref(err))
        if not self._t:
            _raise(err)

    def close(self) -> None:
        if getattr(self, "_t", None):
            _lib.s2s_tokenizer_free(self._t)
            self._t = None

    def __del__(self) -> None:
        self.close()

    def tokenize(self, text: str) -> List[str]:
        """text's tokens (subword units with bpe), as `s2s tokenize` writes them."""
        b = _encode(text)
        err = _Error()
        return _take_string(_lib.s2s_tokenizer_tokenize(self._t, b, len(b), ctypes.byref(err)), err).split()

    def detokenize(self, tokens: Union[str, Sequence[str]]) -> str:
        """The text of tokens, as `s2s tokenize --detok`."""
        b = _encode(tokens if isinstance(tokens, str) else " ".join(tokens))
        err = _Error()
        return _take_string(_lib.s2s_tokenizer_detokenize(self._t, b, len(b), ctypes.byref(err)), err)


# The options of Translator and translate: the names of the C fields; None leaves the
# library's default (load) or the translator's (a call).
_CALL_OPTIONS = (
    "beam",
    "nbest",
    "length_penalty",
    "max_len",
    "batch",
    "split",
    "copy_numbers",
    "replace_unk",
    "constraints",
    "attention",
)


class Translator:
    """A loaded model file, or an ensemble of several (a list of paths), with the options
    of `s2s translate` (docs/cli/translate.md); each default is the command's:

    beam=5, nbest=1, length_penalty=1.0, max_len=0 (twice the source tokens plus 10),
    batch=64, split=True (texts split into sentences, with nbest 1 and no attention),
    copy_numbers=True, replace_unk=False, constraints=False (a text that starts with
    '{' is a JSON object: text, constraints, avoid, prefix), attention=False;
    fixed at load: attention_layer=0 (Transformer: the last), precision="int8" ("bf16",
    "f32"), threads=0 (every core; one setting of the whole process), glossary=None (a
    file of "SOURCE<TAB>TARGET" lines), glossary_ignore_case=False.

    Raises Error (code ERR_MODEL, ERR_ARGUMENT) with the library's message.
    """

    def __init__(
        self,
        path: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
        *,
        beam: int = 5,
        nbest: int = 1,
        length_penalty: float = 1.0,
        max_len: int = 0,
        batch: int = 64,
        split: bool = True,
        copy_numbers: bool = True,
        replace_unk: bool = False,
        constraints: bool = False,
        attention: bool = False,
        attention_layer: int = 0,
        precision: str = "int8",
        threads: int = 0,
        glossary: Optional[Union[str, os.PathLike]] = None,
        glossary_ignore_case: bool = False,
    ) -> None:
        self._tr: Optional[int] = None
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        if precision not in _PRECISIONS:
            raise Error(ERR_ARGUMENT, f"precision must be int8, bf16 or f32, not '{precision}'")
        o = _lib.s2s_translator_options_default()
        for name, value in (
            ("beam", beam),
            ("nbest", nbest),
            ("length_penalty", length_penalty),
            ("max_len", max_len),
            ("batch", batch),
            ("split", split),
            ("copy_numbers", copy_numbers),
            ("replace_unk", replace_unk),
            ("constraints", constraints),
            ("attention", attention),
            ("attention_layer", attention_layer),
            ("threads", threads),
            ("glossary_ignore_case", glossary_ignore_case),
        ):
            setattr(o, name, value)
        o.precision = _PRECISIONS[precision]
        o.glossary = os.fsencode(glossary) if glossary is not None else None
        self._options = o
        cpaths = (ctypes.c_char_p * max(len(paths), 1))(*[os.fsencode(p) for p in paths])
        err = _Error()
        tr = _lib.s2s_translator_load(cpaths, len(paths), ctypes.byref(o), ctypes.byref(err))
        if not tr:
            _raise(err)
        self._tr = tr

    def close(self) -> None:
        """Frees the model (also done when the Translator is collected)."""
        if self._tr:
            _lib.s2s_translator_free(self._tr)
            self._tr = None

    def __enter__(self) -> "Translator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def _handle(self) -> int:
        if not self._tr:
            raise Error(ERR_ARGUMENT, "the translator was closed")
        return self._tr

    def _options_with(self, overrides: Dict[str, Any]) -> _Options:
        """The translator's options, with those of a call (None: unchanged)."""
        o = _Options.from_buffer_copy(self._options)
        for name, value in overrides.items():
            if name not in _CALL_OPTIONS:
                raise TypeError(f"unknown option '{name}' (a call takes {', '.join(_CALL_OPTIONS)})")
            if value is not None:
                setattr(o, name, value)
        return o

    def _call(
        self, texts: Sequence[str], overrides: Dict[str, Any], given: Optional[Sequence[Optional[Constraints]]] = None
    ) -> List[Translation]:
        tr = self._handle()
        o = self._options_with(overrides)
        arr = _strings(texts, "text")
        err = _Error()
        if given is None:
            res = _lib.s2s_translate(tr, arr, len(texts), ctypes.byref(o), ctypes.byref(err))
        else:
            if len(given) != len(texts):
                raise Error(ERR_ARGUMENT, f"{len(given)} constraints for {len(texts)} texts")
            keep = []  # the C arrays, alive for the call
            cons = (_Constraints * max(len(texts), 1))()
            for i, c in enumerate(given):
                if c is None:
                    continue
                req = _strings(list(c.require), f"text:{i + 1}: constraint")
                avoid = _strings(list(c.avoid), f"text:{i + 1}: avoided phrase")
                prefix = _encode(c.prefix) if c.prefix is not None else None
                keep += [req, avoid, prefix]
                cons[i] = _Constraints(req, len(c.require), avoid, len(c.avoid), prefix)
            res = _lib.s2s_translate_constrained(tr, arr, cons, len(texts), ctypes.byref(o), ctypes.byref(err))
        if not res:
            _raise(err)
        try:
            out = []
            for i in range(_lib.s2s_result_count(res)):
                hyps = [
                    Hypothesis(_lib.s2s_result_text(res, i, k).decode(), _lib.s2s_result_score(res, i, k))
                    for k in range(_lib.s2s_result_hypotheses(res, i))
                ]
                att = None
                a = _Attention()
                if _lib.s2s_result_attention(res, i, ctypes.byref(a)) == 0:
                    ns, nt = a.source_len, a.output_len
                    att = Attention(
                        [a.source[j].decode() for j in range(ns)],
                        [a.output[t].decode() for t in range(nt)],
                        [[a.weights[t * ns + j] for j in range(ns)] for t in range(nt)],
                    )
                out.append(Translation(hyps, att))
            return out
        finally:
            _lib.s2s_result_free(res)

    def translate(
        self, texts: Sequence[str], *, text_constraints: Optional[Sequence[Optional[Constraints]]] = None, **options: Any
    ) -> List[str]:
        """The best translation of each text, as `s2s translate` writes them. options:
        those of the Translator that a call may change (beam, nbest, length_penalty,
        max_len, batch, split, copy_numbers, replace_unk, constraints, attention).
        text_constraints: a Constraints (or None) for each text, given apart from the
        plain texts (not with constraints=True). Raises Error (ERR_INPUT, "text:I: ...")
        for a text that cannot be translated."""
        return [t.text for t in self._call(texts, options, text_constraints)]

    def translate_nbest(
        self,
        texts: Sequence[str],
        nbest: Optional[int] = None,
        *,
        text_constraints: Optional[Sequence[Optional[Constraints]]] = None,
        **options: Any,
    ) -> List[Translation]:
        """Each text's nbest hypotheses (default: the Translator's nbest) with their
        scores, best first, and with attention=True its attention."""
        return self._call(texts, dict(options, nbest=nbest), text_constraints)

    def tokenize(self, text: str, side: str = "source") -> List[str]:
        """text's tokens as the model reads that side ("source" or "target"): tokenized,
        and split into subword units when the model has BPE codes."""
        return self._tokens("s2s_tokenize", text, side).split()

    def detokenize(self, tokens: Union[str, Sequence[str]], side: str = "target") -> str:
        """The text of tokens (a list, or one string of space-separated tokens) in that
        side's language: subword units joined, then detokenized."""
        text = tokens if isinstance(tokens, str) else " ".join(tokens)
        return self._tokens("s2s_detokenize", text, side)

    def _tokens(self, fn: str, text: str, side: str) -> str:
        tr = self._handle()
        if side not in _SIDES:
            raise Error(ERR_ARGUMENT, f"side must be source or target, not '{side}'")
        b = _encode(text)
        nul = b.find(b"\0")
        if nul >= 0:
            raise Error(ERR_INPUT, f"NUL byte at byte {nul + 1}")
        err = _Error()
        return _take_string(getattr(_lib, fn)(tr, _SIDES[side], b, ctypes.byref(err)), err)

    def evaluate(self, tsv: Union[str, os.PathLike], *, by_length: bool = False, **options: Any) -> Evaluation:
        """`s2s eval` of the test set tsv (source<TAB>reference lines) with this
        translator (options as translate's). Raises Error."""
        tr = self._handle()
        o = self._options_with(options)
        err = _Error()
        ev = _lib.s2s_evaluate(tr, os.fsencode(tsv), int(by_length), ctypes.byref(o), ctypes.byref(err))
        if not ev:
            _raise(err)
        try:
            return Evaluation(
                text=_lib.s2s_evaluation_report(ev, 0).decode(),
                json=json.loads(_lib.s2s_evaluation_report(ev, 1).decode()),
                translations=_lib.s2s_evaluation_translations(ev).decode().splitlines(),
            )
        finally:
            _lib.s2s_evaluation_free(ev)

    def export_ctranslate2(self, directory: Union[str, os.PathLike]) -> None:
        """Writes the model to directory (absent or empty) in CTranslate2's format, as
        `s2s export --ctranslate2`. Raises Error (ERR_ARGUMENT for an ensemble or a
        recurrent model, ERR_OUTPUT when directory cannot be written)."""
        err = _Error()
        if _lib.s2s_export_ctranslate2(self._handle(), os.fsencode(directory), ctypes.byref(err)) != 0:
            _raise(err)

    @property
    def info(self) -> ModelInfo:
        """The model file's configuration and sizes (the first file of an ensemble)."""
        i = _lib.s2s_translator_info(self._handle()).contents
        return ModelInfo(
            arch=i.arch.decode(),
            direction=i.direction.decode(),
            source_lang=i.source_lang.decode(),
            target_lang=i.target_lang.decode(),
            keep_case=bool(i.keep_case),
            source_vocab=i.source_vocab,
            target_vocab=i.target_vocab,
            source_merges=i.source_merges,
            target_merges=i.target_merges,
            parameters=i.parameters,
            models=i.models,
            config=json.loads(i.config_json.decode()),
            history=json.loads(i.history_json.decode()),
            attention_layers=i.attention_layers,
            attention_heads=i.attention_heads,
        )


def language_code(s: str) -> Optional[str]:
    """s as an ISO 639 code in its canonical form ("deu" -> "de"), or None when s is not
    a code s2s knows."""
    buf = ctypes.create_string_buffer(4)
    return buf.value.decode() if _lib.s2s_language_code(_encode(s), buf) == 0 else None


def language_name(s: str) -> Optional[str]:
    """The English name of the language of code s ("de" -> "German"), or None (a code
    without a two-letter one, or not a code)."""
    name = _lib.s2s_language_name(_encode(s))
    return name.decode() if name else None


def score(
    hyps: Sequence[str],
    refs: Union[Sequence[str], Sequence[Sequence[str]]],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    chrf_lowercase: bool = False,
) -> Scores:
    """Corpus BLEU and chrF2 of hyps against refs, as `s2s score HYP REF...` (sacreBLEU):
    refs is one reference per hypothesis (a list of str), or several such lists.
    tokenize: BLEU's tokenizer, "13a", "intl" or "none". Raises Error."""
    sets: List[Sequence[str]]
    if len(refs) > 0 and isinstance(refs[0], str):
        sets = [refs]  # type: ignore[list-item]
    else:
        sets = list(refs)  # type: ignore[arg-type]
    n = len(hyps)
    for r, s in enumerate(sets):
        if len(s) != n:
            raise Error(ERR_ARGUMENT, f"reference set {r + 1} has {len(s)} lines, the hypotheses {n}")
    h = _strings(hyps, "hypothesis")
    flat: List[str] = [t for s in sets for t in s]
    r_arr = _strings(flat, "reference")
    o = _lib.s2s_score_options_default()
    tok = tokenize.encode()
    o.tokenize = tok
    o.lowercase = lowercase
    o.chrf_lowercase = chrf_lowercase
    out = _Scores()
    err = _Error()
    if _lib.s2s_score(h, n, r_arr, len(sets), ctypes.byref(o), ctypes.byref(out), ctypes.byref(err)) != 0:
        _raise(err)
    return Scores(
        bleu=out.bleu,
        precisions=list(out.precisions),
        brevity_penalty=out.brevity_penalty,
        ratio=out.ratio,
        hyp_len=out.hyp_len,
        ref_len=out.ref_len,
        chrf=out.chrf,
        bleu_signature=out.bleu_signature.decode(),
        chrf_signature=out.chrf_signature.decode(),
    )

