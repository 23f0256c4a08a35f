"""The model: constants, configuration, vocabulary metadata and the modules."""

import argparse
import contextlib
import io
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import safetensors_io  # noqa: E402  (scripts/safetensors_io.py)

PROG = "torch_ref.py"
FORMAT = "s2s-model-1"
PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>")


class RefError(Exception):
    """A user-facing error: printed as 'torch_ref.py: MESSAGE', exit status 1."""


# ---------------------------------------------------------------------------
# Configuration (the s2s.config object of the model file)
# ---------------------------------------------------------------------------

# Reference configuration of docs/model.md. Key order is the order in which s2s
# writes s2s.config.
DEFAULT_CONFIG = {
    "cell": "gru",
    "layers": 1,
    "bidir": True,
    "emb": 256,          # E
    "hidden": 256,       # H, per direction
    "dec_hidden": 256,   # D
    "attn": 256,         # A
    "attention": "bahdanau",  # the scoring function (ATTENTION_KINDS)
    "heads": 1,          # multihead only; 1 otherwise
    "local": "none",     # local window: none, m (monotonic), p (predictive)
    "window": 0,         # half-width Dw of a local window; 0 without one
    "input_feed": False,  # Luong path: feed h~_{t-1} to the decoder's first layer
    "bridge": "linear",  # initial decoder state: linear, zero, attn-pool
    "deep_out": 256,     # P
    "dropout": 0.1,
    "label_smoothing": 0.1,
    "tie_embeddings": False,
    "direction": "en-fr",
    "src_lang": "en",
    "tgt_lang": "fr",
    "keep_case": False,
}
CONFIG_KEYS = tuple(DEFAULT_CONFIG)
# The keys of the attention variants and bridges. A model file may lack them (files
# written before they existed): they then take their defaults.
VARIANT_KEYS = ("heads", "local", "window", "input_feed", "bridge")
LANGS = ("en", "fr")
ATTENTION_KINDS = ("bahdanau", "luong-dot", "luong-general", "luong-concat", "scaled-dot", "multihead")
LUONG_KINDS = ATTENTION_KINDS[1:]
LOCAL_KINDS = ("none", "m", "p")
BRIDGE_KINDS = ("linear", "zero", "attn-pool")


def is_luong(cfg):
    return cfg["attention"] in LUONG_KINDS


def make_config(user, where="config", complete=False):
    """Validates a config dict; missing keys take DEFAULT_CONFIG values unless
    complete=True (a model file must hold every key but the variant keys, which
    files written before them lack). Returns a new dict."""
    if not isinstance(user, dict):
        raise RefError(f"{where}: expected a JSON object")
    if user.get("arch") == "transformer":
        from .transformer import make_tf_config
        return make_tf_config(user, where, complete)
    if "arch" in user:
        if user["arch"] != "rnn":
            raise RefError(f"{where}: 'arch' must be \"rnn\" or \"transformer\", not {json.dumps(user['arch'])}")
        user = {k: v for k, v in user.items() if k != "arch"}
    unknown = [k for k in user if k not in DEFAULT_CONFIG]
    if unknown:
        raise RefError(f"{where}: unknown key '{unknown[0]}'")
    if complete:
        missing = [k for k in CONFIG_KEYS if k not in user and k not in VARIANT_KEYS]
        if missing:
            raise RefError(f"{where}: missing key '{missing[0]}'")
    cfg = dict(DEFAULT_CONFIG)
    cfg.update(user)
    # direction and the languages describe the same thing; fill one from the other.
    if not complete:
        if "direction" in user and "src_lang" not in user and "tgt_lang" not in user:
            parts = str(user["direction"]).split("-")
            if len(parts) == 2:
                cfg["src_lang"], cfg["tgt_lang"] = parts
        elif "direction" not in user:
            cfg["direction"] = f"{cfg['src_lang']}-{cfg['tgt_lang']}"

    def need(key, ok, what):
        if not ok(cfg[key]):
            raise RefError(f"{where}: '{key}' must be {what}, not {json.dumps(cfg[key])}")

    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    def is_num(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def one_of(kinds):
        return " or ".join(f'"{a}"' for a in kinds)

    need("cell", lambda v: v in ("gru", "lstm"), '"gru" or "lstm"')
    need("layers", lambda v: is_int(v) and 1 <= v <= 16, "an integer in 1..16")
    for k in ("emb", "hidden", "dec_hidden", "attn", "deep_out"):
        need(k, lambda v: is_int(v) and 1 <= v <= 65536, "an integer in 1..65536")
    for k in ("bidir", "tie_embeddings", "keep_case", "input_feed"):
        need(k, lambda v: isinstance(v, bool), "true or false")
    need("attention", lambda v: v in ATTENTION_KINDS, one_of(ATTENTION_KINDS))
    need("heads", lambda v: is_int(v) and 1 <= v <= 65536, "an integer in 1..65536")
    need("local", lambda v: v in LOCAL_KINDS, one_of(LOCAL_KINDS))
    need("window", lambda v: is_int(v) and 0 <= v <= 65536, "an integer in 0..65536")
    need("bridge", lambda v: v in BRIDGE_KINDS, one_of(BRIDGE_KINDS))
    need("dropout", lambda v: is_num(v) and 0 <= v < 1, "a number in [0,1)")
    need("label_smoothing", lambda v: is_num(v) and 0 <= v < 1, "a number in [0,1)")
    need("src_lang", lambda v: v in LANGS, '"en" or "fr"')
    need("tgt_lang", lambda v: v in LANGS, '"en" or "fr"')
    need("direction", lambda v: v == f"{cfg['src_lang']}-{cfg['tgt_lang']}",
         f'"{cfg["src_lang"]}-{cfg["tgt_lang"]}" (src_lang-tgt_lang)')
    if cfg["tie_embeddings"] and cfg["deep_out"] != cfg["emb"]:
        raise RefError(f"{where}: tie_embeddings requires deep_out == emb "
                       f"({cfg['deep_out']} != {cfg['emb']})")
    if cfg["attention"] == "multihead":
        if cfg["attn"] % cfg["heads"]:
            raise RefError(f"{where}: heads {cfg['heads']} does not divide attn {cfg['attn']}")
    elif cfg["heads"] != 1:
        raise RefError(f"{where}: heads {cfg['heads']} needs attention \"multihead\" "
                       f"(heads is 1 with \"{cfg['attention']}\")")
    if cfg["local"] != "none":
        if not is_luong(cfg):
            raise RefError(f"{where}: local needs a Luong-path attention "
                           f"({one_of(LUONG_KINDS)}), not \"{cfg['attention']}\"")
        if cfg["window"] < 1:
            raise RefError(f"{where}: window must be ≥ 1 with local \"{cfg['local']}\"")
    elif cfg["window"] != 0:
        raise RefError(f"{where}: window {cfg['window']} needs local \"m\" or \"p\" "
                       f"(window is 0 with local \"none\")")
    if cfg["input_feed"] and not is_luong(cfg):
        raise RefError(f"{where}: input_feed needs a Luong-path attention "
                       f"({one_of(LUONG_KINDS)}), not \"{cfg['attention']}\"")
    cfg["dropout"] = float(cfg["dropout"])
    cfg["label_smoothing"] = float(cfg["label_smoothing"])
    return {k: cfg[k] for k in CONFIG_KEYS}


def config_json(cfg):
    """The s2s.config text of a model file: every key in CONFIG_KEYS order, as s2s
    writes it (share_embeddings only when true)."""
    return json.dumps({k: v for k, v in cfg.items() if k != "share_embeddings" or v})


def parse_config_arg(arg):
    """--config: a JSON object given inline ('{...}') or the path of a JSON file."""
    if arg is None:
        return make_config({})
    return make_config(*config_arg_object(arg))


def config_arg_object(arg):
    """The JSON object of --config as given (inline or a file's), and where it is from."""
    text, where = arg, "--config"
    if not arg.lstrip().startswith("{"):
        try:
            with open(arg, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise RefError(f"--config: {arg}: {e.strerror}")
        where = arg
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise RefError(f"{where}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}")
    return obj, where


def enc_size(cfg):
    """K: the size of one encoder state."""
    return 2 * cfg["hidden"] if cfg["bidir"] else cfg["hidden"]


def is_transformer(cfg):
    return cfg.get("arch") == "transformer"


def build_model(cfg, vs, vt):
    """The module of a configuration: Seq2Seq or Transformer."""
    if is_transformer(cfg):
        from .transformer import Transformer
        return Transformer(cfg, vs, vt)
    return Seq2Seq(cfg, vs, vt)


def doc_tensor_shapes(cfg, vs, vt):
    """The tensor table of docs/model.md (with the variants' tensors of "Attention
    variants and bridges"), in layout order, written out independently of the module
    code (selftest compares it with the model's state_dict)."""
    if is_transformer(cfg):
        from .transformer import tf_tensor_shapes
        return tf_tensor_shapes(cfg, vs, vt)
    E, H, D, A, P, L = (cfg[k] for k in ("emb", "hidden", "dec_hidden", "attn", "deep_out", "layers"))
    K, G = enc_size(cfg), (3 if cfg["cell"] == "gru" else 4)
    kind, luong = cfg["attention"], is_luong(cfg)
    t = {"src_emb.weight": (vs, E), "tgt_emb.weight": (vt, E)}
    for l in range(L):
        for sfx in ([""] + (["_reverse"] if cfg["bidir"] else [])):
            t[f"encoder.weight_ih_l{l}{sfx}"] = (G * H, E if l == 0 else K)
            t[f"encoder.weight_hh_l{l}{sfx}"] = (G * H, H)
            t[f"encoder.bias_ih_l{l}{sfx}"] = (G * H,)
            t[f"encoder.bias_hh_l{l}{sfx}"] = (G * H,)
    if cfg["bridge"] != "zero":
        for l in range(L):
            t[f"bridge.{l}.weight"], t[f"bridge.{l}.bias"] = (D, K), (D,)
        if cfg["cell"] == "lstm":
            for l in range(L):
                t[f"bridge_c.{l}.weight"], t[f"bridge_c.{l}.bias"] = (D, K), (D,)
    if cfg["bridge"] == "attn-pool":
        t["bridge_pool.proj.weight"], t["bridge_pool.proj.bias"] = (A, K), (A,)
        t["bridge_pool.context.weight"] = (1, A)
    if kind in ("bahdanau", "luong-concat", "scaled-dot", "multihead"):
        t["attention.query.weight"] = (A, D)
    if kind == "bahdanau":
        t["attention.key.weight"], t["attention.key.bias"] = (A, K), (A,)
    elif kind == "luong-general" or (kind == "luong-dot" and K != D):
        t["attention.key.weight"] = (D, K)
    elif kind in ("luong-concat", "scaled-dot", "multihead"):
        t["attention.key.weight"] = (A, K)
    if kind in ("bahdanau", "luong-concat"):
        t["attention.v.weight"] = (1, A)
    if kind == "multihead":
        t["attention.value.weight"] = (A, K)
        t["attention.out.weight"] = (K, A)
    if cfg["local"] == "p":
        t["attention.pos.weight"] = (A, D)
        t["attention.pos_v.weight"] = (1, A)
    for l in range(L):
        if l > 0:
            n_in = D
        elif not luong:
            n_in = E + K
        else:
            n_in = E + P if cfg["input_feed"] else E
        t[f"decoder.weight_ih_l{l}"] = (G * D, n_in)
        t[f"decoder.weight_hh_l{l}"] = (G * D, D)
        t[f"decoder.bias_ih_l{l}"] = (G * D,)
        t[f"decoder.bias_hh_l{l}"] = (G * D,)
    t["out.pre.weight"], t["out.pre.bias"] = (P, K + D if luong else D + K + E), (P,)
    if not cfg["tie_embeddings"]:
        t["out.proj.weight"] = (vt, P)
    t["out.proj.bias"] = (vt,)
    return t


# ---------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------

def read_vocab_file(path):
    """An s2s vocabulary file: 'token<TAB>count' per line, the four specials first."""
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise RefError(f"{path}: {e.strerror}")
    except UnicodeDecodeError as e:
        raise RefError(f"{path}: invalid UTF-8 at byte {e.start}")
    if lines and lines[-1] == "":
        lines.pop()
    tokens = []
    for i, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0] or not fields[1].isdigit():
            raise RefError(f"{path}:{i}: expected 'token<TAB>count'")
        tokens.append(fields[0])
    check_vocab(tokens, path)
    return tokens


def check_vocab(tokens, where):
    if tuple(tokens[:4]) != SPECIALS:
        raise RefError(f"{where}: the first four tokens must be {' '.join(SPECIALS)}")
    if len(set(tokens)) != len(tokens):
        raise RefError(f"{where}: duplicate token")


def synth_vocab(n):
    """Placeholder tokens for a vocabulary of size n: the specials, then w4, w5, ..."""
    return list(SPECIALS) + [f"w{i}" for i in range(4, n)]


def vocab_meta(tokens):
    """s2s.vocab.* metadata: the tokens in id order, one per line (no final newline)."""
    return "\n".join(tokens)


def vocab_from_meta(text, where):
    tokens = text.split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    check_vocab(tokens, where)
    return tokens


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------

class Attention(nn.Module):
    """Bahdanau (additive) attention: e_j = v . tanh(query(s) + key(h_j)), masked
    softmax; queried with the previous decoder state."""

    def __init__(self, D, K, A):
        super().__init__()
        self.query = nn.Linear(D, A, bias=False)
        self.key = nn.Linear(K, A)
        self.v = nn.Linear(A, 1, bias=False)

    def precompute(self, h):
        """Per-batch part: keys (S,B,A); no values."""
        return self.key(h), None

    def forward(self, s, keys, h, mask):
        """s (B,D), keys (S,B,A), h (S,B,K), mask (S,B) true at padding.
        Returns the context (B,K) and the weights (S,B)."""
        q = self.query(s)                                          # (B,A)
        e = self.v(torch.tanh(q.unsqueeze(0) + keys)).squeeze(2)  # (S,B)
        a = torch.softmax(e.masked_fill(mask, float("-inf")), dim=0)
        c = (a.unsqueeze(2) * h).sum(0)                            # (B,K)
        return c, a


class LuongAttention(nn.Module):
    """The Luong-path scores (luong-dot, luong-general, luong-concat, scaled-dot,
    multihead), global or local (m, p) windows, queried with the current top decoder
    state s_t. No biases. Submodules are registered in the layout order of
    docs/model.md: query, key, v, value, out, pos, pos_v (those the variant uses)."""

    def __init__(self, cfg):
        super().__init__()
        D, A, K = cfg["dec_hidden"], cfg["attn"], enc_size(cfg)
        self.kind, self.local, self.window = cfg["attention"], cfg["local"], cfg["window"]
        self.heads = cfg["heads"]
        self.A = A
        kind = self.kind
        if kind in ("luong-concat", "scaled-dot", "multihead"):
            self.query = nn.Linear(D, A, bias=False)
        if kind == "luong-general" or (kind == "luong-dot" and K != D):
            self.key = nn.Linear(K, D, bias=False)
        elif kind in ("luong-concat", "scaled-dot", "multihead"):
            self.key = nn.Linear(K, A, bias=False)
        if kind == "luong-concat":
            self.v = nn.Linear(A, 1, bias=False)
        if kind == "multihead":
            self.value = nn.Linear(K, A, bias=False)
            self.out = nn.Linear(A, K, bias=False)
        if self.local == "p":
            self.pos = nn.Linear(D, A, bias=False)
            self.pos_v = nn.Linear(A, 1, bias=False)

    def precompute(self, h):
        """Per-batch part: keys ((S,B,D) or (S,B,A); h itself for luong-dot with
        K == D) and, for multihead, values (S,B,A)."""
        keys = self.key(h) if hasattr(self, "key") else h
        values = self.value(h) if self.kind == "multihead" else None
        return keys, values

    def window_bounds(self, s, src_len, i):
        """Inclusive window [lo, hi] (B) of each row at 0-based step i, and p (B)
        for local = p (None otherwise)."""
        last = src_len - 1
        if self.local == "none":
            return torch.zeros_like(src_len), last, None
        Dw = self.window
        if self.local == "m":
            p = torch.clamp(last, max=i)
            return torch.clamp(p - Dw, min=0), torch.minimum(last, p + Dw), None
        p = src_len.to(s.dtype) * torch.sigmoid(self.pos_v(torch.tanh(self.pos(s))).squeeze(1))  # (B)
        pd = p.detach()
        lo = torch.clamp(torch.ceil(pd - Dw).long(), min=0)
        hi = torch.minimum(last, torch.floor(pd + Dw).long())
        return lo, hi, p

    def forward(self, s, enc, i):
        """s (B,D) the top decoder state at step i (0-based). Returns the context (B,K)
        and a dict: 'a' the weights (S,B) (the heads' mean for multihead), 'heads'
        (S,B,Hh) for multihead, 'lo', 'hi' (B) the window, 'p' (B) for local = p."""
        h, keys, values = enc.h, enc.keys, enc.values
        S = h.shape[0]
        kind = self.kind
        if kind in ("luong-dot", "luong-general"):
            e = (keys * s.unsqueeze(0)).sum(2)                                # (S,B)
        elif kind == "luong-concat":
            q = self.query(s)
            e = self.v(torch.tanh(q.unsqueeze(0) + keys)).squeeze(2)           # (S,B)
        elif kind == "scaled-dot":
            q = self.query(s)
            e = (keys * q.unsqueeze(0)).sum(2) / math.sqrt(self.A)             # (S,B)
        else:  # multihead
            Hh = self.heads
            dh = self.A // Hh
            q = self.query(s).reshape(-1, Hh, dh)                              # (B,Hh,dh)
            k = keys.reshape(S, -1, Hh, dh)                                    # (S,B,Hh,dh)
            e = (k * q.unsqueeze(0)).sum(3) / math.sqrt(dh)                    # (S,B,Hh)
        lo, hi, p = self.window_bounds(s, enc.src_len, i)
        j = torch.arange(S, device=s.device).unsqueeze(1)                      # (S,1)
        outside = (j < lo.unsqueeze(0)) | (j > hi.unsqueeze(0))                # (S,B)
        if e.dim() == 3:
            outside = outside.unsqueeze(2)
        a = torch.softmax(e.masked_fill(outside, float("-inf")), dim=0)
        if p is not None:
            sigma = self.window / 2
            jf = j.to(s.dtype)
            g = torch.exp(-(jf - p.unsqueeze(0)) ** 2 / (2 * sigma * sigma))  # (S,B)
            a = a * (g.unsqueeze(2) if a.dim() == 3 else g)
        info = {"lo": lo, "hi": hi, "p": p, "heads": None}
        if kind == "multihead":
            Sv, B = values.shape[0], values.shape[1]
            v = values.reshape(Sv, B, self.heads, -1)                          # (S,B,Hh,dh)
            o = (a.unsqueeze(3) * v).sum(0).reshape(B, -1)                     # (B,A)
            c = self.out(o)                                                    # (B,K)
            info["heads"] = a
            info["a"] = a.mean(2)
        else:
            c = (a.unsqueeze(2) * h).sum(0)                                    # (B,K)
            info["a"] = a
        return c, info


class BridgePool(nn.Module):
    """attn-pool bridge: m = sum_j alpha_j h_j, alpha = masked_softmax(context .
    tanh(proj(h_j)))."""

    def __init__(self, K, A):
        super().__init__()
        self.proj = nn.Linear(K, A)
        self.context = nn.Linear(A, 1, bias=False)

    def forward(self, h, mask):
        u = torch.tanh(self.proj(h))                                           # (S,B,A)
        e = self.context(u).squeeze(2)                                         # (S,B)
        alpha = torch.softmax(e.masked_fill(mask, float("-inf")), dim=0)
        return (alpha.unsqueeze(2) * h).sum(0)                                 # (B,K)


class DeepOutput(nn.Module):
    """Bahdanau path: o = tanh(pre [s; c; y]); Luong path: h~ = tanh(pre [c; s]).
    logits = proj(dropout(o or h~))."""

    def __init__(self, n_in, P, vt):
        super().__init__()
        self.pre = nn.Linear(n_in, P)
        self.proj = nn.Linear(P, vt)


class Encoded:
    """What the decoder reads of one batch: h (S,B,K), keys, values (multihead),
    mask (S,B) true at padding, src_len (B)."""

    def __init__(self, h, keys, values, mask, src_len):
        self.h, self.keys, self.values, self.mask, self.src_len = h, keys, values, mask, src_len


class Seq2Seq(nn.Module):
    def __init__(self, cfg, src_vocab, tgt_vocab):
        super().__init__()
        cfg = make_config(cfg)
        self.cfg = cfg
        E, H, D, A, P, L = (cfg[k] for k in ("emb", "hidden", "dec_hidden", "attn", "deep_out", "layers"))
        K = enc_size(cfg)
        self.lstm = cfg["cell"] == "lstm"
        self.luong = is_luong(cfg)
        rnn = nn.LSTM if self.lstm else nn.GRU
        between = cfg["dropout"] if L > 1 else 0.0  # nn.GRU/LSTM dropout between layers
        # Modules are created in layout order (the order of the random draws of init).
        self.src_emb = nn.Embedding(src_vocab, E)
        self.tgt_emb = nn.Embedding(tgt_vocab, E)
        self.encoder = rnn(E, H, num_layers=L, bidirectional=cfg["bidir"], dropout=between)
        if cfg["bridge"] != "zero":
            self.bridge = nn.ModuleList([nn.Linear(K, D) for _ in range(L)])
            if self.lstm:
                self.bridge_c = nn.ModuleList([nn.Linear(K, D) for _ in range(L)])
        if cfg["bridge"] == "attn-pool":
            self.bridge_pool = BridgePool(K, A)
        if self.luong:
            self.attention = LuongAttention(cfg)
            self.decoder = rnn(E + P if cfg["input_feed"] else E, D, num_layers=L, dropout=between)
            self.out = DeepOutput(K + D, P, tgt_vocab)
        else:
            self.attention = Attention(D, K, A)
            self.decoder = rnn(E + K, D, num_layers=L, dropout=between)
            self.out = DeepOutput(D + K + E, P, tgt_vocab)
        if cfg["tie_embeddings"]:
            self.out.proj.weight = self.tgt_emb.weight
        self.drop = nn.Dropout(cfg["dropout"])

    # -- encoder -----------------------------------------------------------
    def _bridge(self, maps, final, l):
        """final: h_n or c_n (L*dirs,B,H). Forward final state and backward state at
        position 0 of layer l, concatenated, through maps[l]."""
        if self.cfg["bidir"]:
            x = torch.cat([final[2 * l], final[2 * l + 1]], dim=1)
        else:
            x = final[l]
        return torch.tanh(maps[l](x))

    def encode(self, src, src_len):
        """src (S,B), src_len (B) -> (Encoded, initial decoder state). The decoder
        state is (rnn state, h~_{t-1}, step index): the rnn state is (L,B,D) or a
        pair (h,c) for LSTM; h~ (B,P) zeros (used with input feeding only)."""
        S = src.shape[0]
        x = self.drop(self.src_emb(src))
        packed = pack_padded_sequence(x, src_len.cpu(), enforce_sorted=False)
        out, final = self.encoder(packed)
        h, _ = pad_packed_sequence(out, total_length=S)
        positions = torch.arange(S, device=src.device).unsqueeze(1)
        mask = positions >= src_len.to(src.device).unsqueeze(0)
        L, B, D = self.cfg["layers"], src.shape[1], self.cfg["dec_hidden"]
        bridge = self.cfg["bridge"]
        if bridge == "zero":
            zero = h.new_zeros(L, B, D)
            state = (zero, zero.clone()) if self.lstm else zero
        elif bridge == "attn-pool":
            m = self.bridge_pool(h, mask)                                      # (B,K)
            hs = torch.stack([torch.tanh(self.bridge[l](m)) for l in range(L)])
            state = (hs, torch.stack([torch.tanh(self.bridge_c[l](m)) for l in range(L)])) if self.lstm else hs
        elif self.lstm:
            hn, cn = final
            state = (torch.stack([self._bridge(self.bridge, hn, l) for l in range(L)]),
                     torch.stack([self._bridge(self.bridge_c, cn, l) for l in range(L)]))
        else:
            state = torch.stack([self._bridge(self.bridge, final, l) for l in range(L)])
        keys, values = self.attention.precompute(h)
        feed = h.new_zeros(B, self.cfg["deep_out"]) if self.cfg["input_feed"] else None
        return Encoded(h, keys, values, mask, src_len.to(src.device)), (state, feed, 0)

    # -- decoder -----------------------------------------------------------
    def decode_step(self, y_tok, dstate, enc):
        """One target step: y_tok (B) the previous token, dstate from encode() or the
        previous step. Returns logits (B,Vt), the next dstate and the attention (a
        dict; 'a' (S,B) are the weights shown to users)."""
        if self.luong:
            return self._luong_step(y_tok, dstate, enc)
        state, feed, i = dstate
        s_prev = state[0][-1] if self.lstm else state[-1]     # top layer's h (B,D)
        c, a = self.attention(s_prev, enc.keys, enc.h, enc.mask)
        y = self.drop(self.tgt_emb(y_tok))                    # (B,E)
        out, state = self.decoder(torch.cat([y, c], dim=1).unsqueeze(0), state)
        s = out[0]                                            # (B,D)
        o = torch.tanh(self.out.pre(torch.cat([s, c, y], dim=1)))
        logits = self.out.proj(self.drop(o))
        return logits, (state, feed, i + 1), {"a": a}

    def _luong_step(self, y_tok, dstate, enc):
        """Luong path: the RNN first, then attention with s_t, h~_t = tanh(pre [c; s]);
        h~_t (before dropout) is the next step's input feed."""
        state, feed, i = dstate
        y = self.drop(self.tgt_emb(y_tok))                    # (B,E)
        x = torch.cat([y, feed], dim=1) if self.cfg["input_feed"] else y
        out, state = self.decoder(x.unsqueeze(0), state)
        s = out[0]                                            # (B,D)
        c, att = self.attention(s, enc, i)
        ht = torch.tanh(self.out.pre(torch.cat([c, s], dim=1)))  # (B,P)
        logits = self.out.proj(self.drop(ht))
        return logits, (state, ht if self.cfg["input_feed"] else None, i + 1), att

    def forward(self, src, src_len, tgt_in):
        """Teacher-forced logits (T,B,Vt)."""
        enc, dstate = self.encode(src, src_len)
        steps = []
        for t in range(tgt_in.shape[0]):
            logits, dstate, _ = self.decode_step(tgt_in[t], dstate, enc)
            steps.append(logits)
        return torch.stack(steps)

    def loss(self, logits, tgt_out, label_smoothing=None):
        return smoothed_loss(self.cfg, logits, tgt_out, label_smoothing)

    @torch.no_grad()
    def greedy(self, src, src_len, max_len=None):
        """Greedy decoding of a batch (greedy_loop)."""
        enc, dstate = self.encode(src, src_len)
        state = [dstate]

        def step(y):
            logits, state[0], _ = self.decode_step(y, state[0], enc)
            return logits
        return greedy_loop(step, src_len, max_len)


def smoothed_loss(cfg, logits, tgt_out, label_smoothing=None):
    """Summed label-smoothed cross-entropy over non-pad targets / their number."""
    eps = cfg["label_smoothing"] if label_smoothing is None else label_smoothing
    n = int((tgt_out != PAD).sum())
    if n == 0:
        raise RefError("batch has no target tokens")
    total = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                            ignore_index=PAD, label_smoothing=eps, reduction="sum")
    return total / n


def greedy_loop(step, src_len, max_len=None):
    """Greedy decoding: step(y) gives the logits (B,V) after the previous tokens y
    (<bos> first). Each sentence stops at <eos> (not included) or after
    max_len(src_len) tokens (default 2*len+10). Returns id lists."""
    B = len(src_len)
    limits = [max_len(int(n)) if max_len else 2 * int(n) + 10 for n in src_len]
    y = torch.full((B,), BOS, dtype=torch.long)
    out = [[] for _ in range(B)]
    done = [False] * B
    while not all(done):
        y = step(y).argmax(dim=1)
        for b, tok in enumerate(y.tolist()):
            if done[b]:
                continue
            if tok == EOS:
                done[b] = True
            else:
                out[b].append(tok)
                if len(out[b]) >= limits[b]:
                    done[b] = True
    return out


def set_threads(n):
    torch.set_num_threads(n)
