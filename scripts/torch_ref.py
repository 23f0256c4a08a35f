#!/usr/bin/python3
"""PyTorch reference implementation of the s2s model (docs/model.md).

The model here is the contract the C code is checked against: same equations,
same tensor names, same file format, for every attention variant and bridge of
docs/model.md (Bahdanau; luong-dot, luong-general, luong-concat, scaled-dot and
multihead on the Luong path, with global, local-m or local-p windows and optional
input feeding; linear, zero or attn-pool bridges). Subcommands:

  init        write a randomly initialised model file
  make-batch  write a random batch (src, src_len, tgt_in, tgt_out) for parity tests
  parity      forward + loss + backward of one batch; writes loss, logits, gradients
  train       train on an `s2s prepare` directory; writes the model and test hypotheses
  selftest    internal consistency checks (gradients, padding, windows, file round
              trip, an independent per-sentence forward), for every variant

Run with /usr/bin/python3 (needs torch). Model files are read and written with
scripts/safetensors_io.py.
"""

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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
    writes it."""
    return json.dumps(cfg)


def parse_config_arg(arg):
    """--config: a JSON object given inline ('{...}') or the path of a JSON file."""
    if arg is None:
        return make_config({})
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
    return make_config(obj, where)


def enc_size(cfg):
    """K: the size of one encoder state."""
    return 2 * cfg["hidden"] if cfg["bidir"] else cfg["hidden"]


def doc_tensor_shapes(cfg, vs, vt):
    """The tensor table of docs/model.md (with the variants' tensors of "Attention
    variants and bridges"), in layout order, written out independently of the module
    code (selftest compares it with the model's state_dict)."""
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
        """Summed label-smoothed cross-entropy over non-pad targets / their number."""
        eps = self.cfg["label_smoothing"] if label_smoothing is None else label_smoothing
        n = int((tgt_out != PAD).sum())
        if n == 0:
            raise RefError("batch has no target tokens")
        total = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                                ignore_index=PAD, label_smoothing=eps, reduction="sum")
        return total / n

    @torch.no_grad()
    def greedy(self, src, src_len, max_len=None):
        """Greedy decoding of a batch. Each sentence stops at <eos> (not included)
        or after max_len(src_len) tokens (default 2*len+10). Returns id lists."""
        B = src.shape[1]
        enc, dstate = self.encode(src, src_len)
        limits = [max_len(int(n)) if max_len else 2 * int(n) + 10 for n in src_len]
        y = torch.full((B,), BOS, dtype=torch.long, device=src.device)
        out = [[] for _ in range(B)]
        done = [False] * B
        while not all(done):
            logits, dstate, _ = self.decode_step(y, dstate, enc)
            y = logits.argmax(dim=1)
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


def model_tensors(model):
    """The tensors stored in the model file: the state_dict without the tied
    out.proj.weight, float32."""
    sd = model.state_dict()
    if model.cfg["tie_embeddings"]:
        del sd["out.proj.weight"]
    return {k: v.detach().to(torch.float32).contiguous() for k, v in sd.items()}


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def save_model(path, model, src_vocab, tgt_vocab, history=None):
    """Writes the model file (safetensors_io.save replaces the file atomically and
    adds s2s.crc32)."""
    if len(src_vocab) != model.src_emb.num_embeddings or len(tgt_vocab) != model.tgt_emb.num_embeddings:
        raise RefError(f"{path}: vocabulary sizes do not match the model")
    meta = {
        "s2s.format": FORMAT,
        "s2s.config": config_json(model.cfg),
        "s2s.vocab.src": vocab_meta(src_vocab),
        "s2s.vocab.tgt": vocab_meta(tgt_vocab),
        "s2s.history": json.dumps(history or {"steps": 0, "epochs": 0, "best_valid_bleu": None,
                                              "seconds": 0}),
    }
    save_st(path, model_tensors(model), meta)


def save_st(path, tensors, metadata):
    try:
        safetensors_io.save(path, tensors, metadata)
    except OSError as e:
        raise RefError(f"{path}: cannot write: {e.strerror or e}")


def load_st(path):
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise RefError(f"{path}: {e.strerror}")
    try:
        return safetensors_io.load(path)
    except OSError as e:
        raise RefError(f"{path}: {e.strerror or e}")
    except safetensors_io.FormatError as e:  # its message starts with the path
        raise RefError(str(e))


def load_model(path, dtype=torch.float32):
    """Returns (model, src_vocab, tgt_vocab, metadata)."""
    tensors, meta = load_st(path)
    if meta.get("s2s.format") != FORMAT:
        raise RefError(f"{path}: not an s2s model (s2s.format is {json.dumps(meta.get('s2s.format'))})")
    for key in ("s2s.config", "s2s.vocab.src", "s2s.vocab.tgt"):
        if key not in meta:
            raise RefError(f"{path}: metadata lacks {key}")
    try:
        cfg_obj = json.loads(meta["s2s.config"])
    except json.JSONDecodeError as e:
        raise RefError(f"{path}: s2s.config: invalid JSON: {e.msg}")
    cfg = make_config(cfg_obj, f"{path}: s2s.config", complete=True)
    src_vocab = vocab_from_meta(meta["s2s.vocab.src"], f"{path}: s2s.vocab.src")
    tgt_vocab = vocab_from_meta(meta["s2s.vocab.tgt"], f"{path}: s2s.vocab.tgt")
    want = doc_tensor_shapes(cfg, len(src_vocab), len(tgt_vocab))
    for name in tensors:
        if name not in want:
            raise RefError(f"{path}: unexpected tensor {name}")
    for name, shape in want.items():
        if name not in tensors:
            raise RefError(f"{path}: missing tensor {name}")
        t = tensors[name]
        if tuple(t.shape) != shape:
            raise RefError(f"{path}: {name} has shape {list(t.shape)}, expected {list(shape)}")
        if t.dtype != torch.float32:
            raise RefError(f"{path}: {name} is {t.dtype}, expected float32")
    model = Seq2Seq(cfg, len(src_vocab), len(tgt_vocab))
    state = dict(tensors)
    if cfg["tie_embeddings"]:
        state["out.proj.weight"] = state["tgt_emb.weight"]
    model.load_state_dict(state, strict=True)
    return model.to(dtype), src_vocab, tgt_vocab, meta


def load_batch(path):
    tensors, _ = load_st(path)
    for name in ("src", "src_len", "tgt_in", "tgt_out"):
        if name not in tensors:
            raise RefError(f"{path}: missing tensor {name}")
        if tensors[name].dtype != torch.int64:
            raise RefError(f"{path}: {name} is {tensors[name].dtype}, expected int64")
    src, src_len, tgt_in, tgt_out = (tensors[k] for k in ("src", "src_len", "tgt_in", "tgt_out"))
    if src.dim() != 2 or src_len.shape != (src.shape[1],):
        raise RefError(f"{path}: src must be (S,B) and src_len (B)")
    if tgt_in.dim() != 2 or tgt_in.shape != tgt_out.shape or tgt_in.shape[1] != src.shape[1]:
        raise RefError(f"{path}: tgt_in and tgt_out must both be (T,B)")
    if int(src_len.min()) < 1 or int(src_len.max()) > src.shape[0]:
        raise RefError(f"{path}: src_len must be in 1..S")
    return src, src_len, tgt_in, tgt_out


def check_batch_ids(batch, vs, vt, where):
    src, _, tgt_in, tgt_out = batch
    if int(src.min()) < 0 or int(src.max()) >= vs:
        raise RefError(f"{where}: source ids must be in 0..{vs - 1}")
    if min(int(tgt_in.min()), int(tgt_out.min())) < 0 or max(int(tgt_in.max()), int(tgt_out.max())) >= vt:
        raise RefError(f"{where}: target ids must be in 0..{vt - 1}")


def make_batch(vs, vt, B, S, T, seed):
    """A random time-major batch. Source lengths vary in 1..S with at least one of
    length S and one of length 1; target lengths (of tgt_in) vary in 1..T with at
    least one of length T and one of length 1. Tokens avoid <pad>, <bos>, <eos>
    (<unk> is allowed)."""
    if vs < 5 or vt < 5:
        raise RefError("vocabularies need at least 5 tokens (4 specials + 1)")
    rng = random.Random(seed)
    src_len = [rng.randint(1, S) for _ in range(B)]
    tgt_len = [rng.randint(1, T) for _ in range(B)]
    for lens, full in ((src_len, S), (tgt_len, T)):
        who = list(range(B))
        rng.shuffle(who)
        lens[who[0]] = full
        if B > 1:
            lens[who[1]] = 1
    src = torch.zeros(S, B, dtype=torch.long)
    tgt_in = torch.zeros(T, B, dtype=torch.long)
    tgt_out = torch.zeros(T, B, dtype=torch.long)

    def word(v):
        return UNK if rng.random() < 0.05 else rng.randrange(4, v)

    for b in range(B):
        for i in range(src_len[b]):
            src[i, b] = word(vs)
        y = [word(vt) for _ in range(tgt_len[b] - 1)]
        for i, tok in enumerate([BOS] + y):
            tgt_in[i, b] = tok
        for i, tok in enumerate(y + [EOS]):
            tgt_out[i, b] = tok
    return src, torch.tensor(src_len, dtype=torch.long), tgt_in, tgt_out


def batch_tensors(batch):
    return dict(zip(("src", "src_len", "tgt_in", "tgt_out"), batch))


# ---------------------------------------------------------------------------
# Parity: forward, loss, backward of one batch
# ---------------------------------------------------------------------------

def run_parity(model, batch, label_smoothing=None):
    """Dropout off (eval mode), gradients on. Returns the tensors of the parity file:
    loss (1), logits (T,B,Vt), grad.NAME for every parameter (tied weights once,
    under tgt_emb.weight), all in the model's dtype."""
    src, src_len, tgt_in, tgt_out = batch
    model.eval()
    model.zero_grad(set_to_none=True)
    with torch.enable_grad():
        logits = model(src, src_len, tgt_in)
        loss = model.loss(logits, tgt_out, label_smoothing)
        loss.backward()
    out = {"loss": loss.detach().reshape(1), "logits": logits.detach().contiguous()}
    for name, p in model.named_parameters():
        g = p.grad if p.grad is not None else torch.zeros_like(p)
        out["grad." + name] = g.detach().contiguous()
    return out


# ---------------------------------------------------------------------------
# Tokenization through the s2s binary
# ---------------------------------------------------------------------------

def run_s2s_lines(s2s, args, lines, what):
    """Runs `s2s ARGS` with lines on stdin; returns its output lines (one per input)."""
    if any("\n" in l for l in lines):
        raise RefError(f"{what}: a line contains a newline")
    try:
        p = subprocess.run([s2s] + args, input="".join(l + "\n" for l in lines).encode("utf-8"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise RefError(f"--s2s {s2s}: {e.strerror}")
    if p.returncode != 0:
        msg = p.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RefError(f"{what}: '{s2s} {' '.join(args)}' failed (exit {p.returncode})"
                       + (f": {msg[-1]}" if msg else ""))
    out = p.stdout.decode("utf-8").split("\n")
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(lines):
        raise RefError(f"{what}: '{s2s} {' '.join(args)}' gave {len(out)} lines for {len(lines)}")
    return out


def tokenize(s2s, lines, lang, keep_case, what):
    args = ["tokenize", "--lang", lang] + (["--keep-case"] if keep_case else [])
    return [l.split() for l in run_s2s_lines(s2s, args, lines, what)]


def detokenize(s2s, token_lines, lang, what):
    return run_s2s_lines(s2s, ["tokenize", "--detok", "--lang", lang],
                         [" ".join(t) for t in token_lines], what)


def read_tsv(path):
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            text = f.read()
    except OSError as e:
        raise RefError(f"{path}: {e.strerror}")
    except UnicodeDecodeError as e:
        raise RefError(f"{path}: invalid UTF-8 at byte {e.start}")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    src, tgt = [], []
    for i, line in enumerate(lines, 1):
        fields = line.rstrip("\r").split("\t")
        if len(fields) != 2:
            raise RefError(f"{path}:{i}: expected 'source<TAB>target'")
        src.append(fields[0])
        tgt.append(fields[1])
    return src, tgt


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------

class Corpus:
    """One split as id lists."""

    def __init__(self, src_ids, tgt_ids):
        self.src, self.tgt = src_ids, tgt_ids

    def __len__(self):
        return len(self.src)


def to_ids(token_lines, index):
    return [[index.get(t, UNK) for t in toks] for toks in token_lines]


def load_split(data_dir, split, cfg, s2s, src_index, tgt_index):
    path = os.path.join(data_dir, split + ".tsv")
    src, tgt = read_tsv(path)
    src_tok = tokenize(s2s, src, cfg["src_lang"], cfg["keep_case"], path)
    tgt_tok = tokenize(s2s, tgt, cfg["tgt_lang"], cfg["keep_case"], path)
    return Corpus(to_ids(src_tok, src_index), to_ids(tgt_tok, tgt_index))


def collate(corpus, idx):
    """Time-major padded tensors for the examples idx (sources must be non-empty)."""
    B = len(idx)
    S = max(len(corpus.src[i]) for i in idx)
    T = max(len(corpus.tgt[i]) for i in idx) + 1
    src = torch.zeros(S, B, dtype=torch.long)
    tgt_in = torch.zeros(T, B, dtype=torch.long)
    tgt_out = torch.zeros(T, B, dtype=torch.long)
    for b, i in enumerate(idx):
        s, y = corpus.src[i], corpus.tgt[i]
        src[:len(s), b] = torch.tensor(s, dtype=torch.long)
        tgt_in[:len(y) + 1, b] = torch.tensor([BOS] + y, dtype=torch.long)
        tgt_out[:len(y) + 1, b] = torch.tensor(y + [EOS], dtype=torch.long)
    src_len = torch.tensor([len(corpus.src[i]) for i in idx], dtype=torch.long)
    return src, src_len, tgt_in, tgt_out


def bucket_batches(corpus, batch_size, rng):
    """Examples sorted by (source length, target length, random), cut into batches,
    batch order shuffled. Empty sources are left out."""
    keep = [i for i in range(len(corpus)) if corpus.src[i]]
    keys = {i: rng.random() for i in keep}
    keep.sort(key=lambda i: (len(corpus.src[i]), len(corpus.tgt[i]), keys[i]))
    batches = [keep[i:i + batch_size] for i in range(0, len(keep), batch_size)]
    rng.shuffle(batches)
    return batches


def corpus_loss(model, corpus, batch_size, label_smoothing=None):
    """Per-token loss over a split (eval mode)."""
    model.eval()
    total, n = 0.0, 0
    order = sorted((i for i in range(len(corpus)) if corpus.src[i]), key=lambda i: len(corpus.src[i]))
    with torch.no_grad():
        for k in range(0, len(order), batch_size):
            batch = collate(corpus, order[k:k + batch_size])
            ntok = int((batch[3] != PAD).sum())
            total += float(model.loss(model(*batch[:3]), batch[3], label_smoothing)) * ntok
            n += ntok
    return total / max(n, 1)


def translate(model, corpus, batch_size):
    """Greedy translations (id lists) of every source of corpus, in order."""
    model.eval()
    hyps = [[] for _ in range(len(corpus))]
    order = sorted((i for i in range(len(corpus)) if corpus.src[i]), key=lambda i: len(corpus.src[i]))
    for k in range(0, len(order), batch_size):
        idx = order[k:k + batch_size]
        src, src_len, _, _ = collate(corpus, idx)
        for i, ids in zip(idx, model.greedy(src, src_len)):
            hyps[i] = ids
    return hyps


def write_atomic(path, text):
    """Writes text to path through a temporary file and a rename."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise RefError(f"{path}: cannot write: {e.strerror or e}")


def train(args):
    if args.time is None and args.steps is None:
        raise RefError("give --time MINUTES or --steps N (or both)")
    for flag, ok in (("time", args.time is None or args.time > 0), ("steps", args.steps is None or args.steps >= 1),
                     ("batch", args.batch >= 1), ("lr", args.lr > 0), ("clip", args.clip > 0),
                     ("threads", args.threads >= 1), ("log-every", args.log_every >= 1)):
        if not ok:
            raise RefError(f"--{flag} must be positive")
    set_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    d = args.data_dir
    src_vocab = read_vocab_file(os.path.join(d, "vocab.src"))
    tgt_vocab = read_vocab_file(os.path.join(d, "vocab.tgt"))
    if args.init:
        if args.config:
            raise RefError("--config and --init exclude each other (the config comes from the model)")
        model, m_src, m_tgt, _ = load_model(args.init)
        if m_src != src_vocab or m_tgt != tgt_vocab:
            raise RefError(f"--init {args.init}: its vocabularies differ from {d}/vocab.src, vocab.tgt")
        cfg = model.cfg
    else:
        cfg = parse_config_arg(args.config)
        model = Seq2Seq(cfg, len(src_vocab), len(tgt_vocab))
    src_index = {t: i for i, t in enumerate(src_vocab)}
    tgt_index = {t: i for i, t in enumerate(tgt_vocab)}
    t0 = time.time()
    splits = {s: load_split(d, s, cfg, args.s2s, src_index, tgt_index) for s in ("train", "valid", "test")}
    train_set = splits["train"]
    n_train = sum(1 for s in train_set.src if s)
    if n_train == 0:
        raise RefError(f"{d}/train.tsv: no pair with a non-empty source")
    print(f"data: {n_train} training pairs, {len(splits['valid'])} valid, {len(splits['test'])} test; "
          f"vocab {len(src_vocab)}/{len(tgt_vocab)}; tokenized in {time.time() - t0:.1f}s", flush=True)
    nparams = sum(p.numel() for p in model.parameters())
    print(f"model: {json.dumps(cfg)} ({nparams} parameters)", flush=True)

    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    limit_s = args.time * 60 if args.time is not None else math.inf
    max_steps = args.steps if args.steps is not None else math.inf
    step, seen, tokens = 0, 0, 0
    log_loss, log_tok = 0.0, 0
    train_s = 0.0
    t_start = time.time()
    stop = False
    while not stop:
        for idx in bucket_batches(train_set, args.batch, rng):
            model.train()
            src, src_len, tgt_in, tgt_out = collate(train_set, idx)
            ntok = int((tgt_out != PAD).sum())
            loss = model.loss(model(src, src_len, tgt_in), tgt_out)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
            step += 1
            seen += len(idx)
            tokens += ntok
            log_loss += float(loss) * ntok
            log_tok += ntok
            train_s = time.time() - t_start
            if step % args.log_every == 0:
                print(f"step {step} epoch {seen / n_train:.2f} loss {log_loss / log_tok:.4f} "
                      f"tok/s {tokens / train_s:.0f} elapsed {train_s:.1f}s", flush=True)
                log_loss, log_tok = 0.0, 0
            if step >= max_steps or train_s >= limit_s:
                stop = True
                break
    print(f"train: {step} steps, {seen / n_train:.2f} epochs, {tokens} target tokens in {train_s:.1f}s, "
          f"{tokens / train_s:.0f} target tokens/s", flush=True)

    valid_loss = corpus_loss(model, splits["valid"], args.batch) if len(splits["valid"]) else None
    if valid_loss is not None:
        nll = corpus_loss(model, splits["valid"], args.batch, label_smoothing=0.0)
        print(f"valid: loss {valid_loss:.4f} nll {nll:.4f} ppl {math.exp(min(nll, 50)):.2f}", flush=True)
    history = {"steps": step, "epochs": round(seen / n_train, 4), "best_valid_bleu": None,
               "seconds": round(train_s, 1), "valid_loss": valid_loss}
    if args.output:
        save_model(args.output, model, src_vocab, tgt_vocab, history)
        print(f"model: wrote {args.output}", flush=True)
    if args.hyp:
        ids = translate(model, splits["test"], args.batch)
        toks = [[tgt_vocab[i] for i in h] for h in ids]
        text = detokenize(args.s2s, toks, cfg["tgt_lang"], "test hypotheses")
        write_atomic(args.hyp, "".join(l + "\n" for l in text))
        print(f"test: wrote {len(text)} greedy translations to {args.hyp}", flush=True)
    return 0


# ---------------------------------------------------------------------------
# Self test
# ---------------------------------------------------------------------------

TINY = {"emb": 8, "hidden": 6, "dec_hidden": 5, "attn": 4, "deep_out": 7, "dropout": 0.3}
TINY_VS, TINY_VT = 11, 13


class SelfTest:
    def __init__(self, verbose):
        self.verbose, self.checks, self.failures = verbose, 0, []

    def check(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures.append(what)
            print(f"selftest: FAIL: {what}", flush=True)
        elif self.verbose:
            print(f"selftest: ok: {what}", flush=True)


def rel_err(a, b):
    """max|a-b| / max|b| (absolute when b is all zero)."""
    a, b = a.double(), b.double()
    scale = float(b.abs().max()) if b.numel() else 0.0
    diff = float((a - b).abs().max()) if b.numel() else 0.0
    return diff / scale if scale > 0 else diff


def close(a, b, rtol, atol):
    """max|a-b| <= rtol*max|b| + atol. The absolute part matters for tensors with
    cancelling sums and tiny values (at initialisation the gradients of
    attention.query.weight and attention.key.bias are sums over source positions
    of terms that nearly cancel, as the attention weights sum to 1)."""
    a, b = a.double(), b.double()
    return float((a - b).abs().max()) <= rtol * float(b.abs().max()) + atol


def selftest_configs():
    out = []
    for cell in ("gru", "lstm"):
        for layers in (1, 2):
            out.append(dict(TINY, cell=cell, layers=layers))
        out.append(dict(TINY, cell=cell, layers=2, bidir=False))
        out.append(dict(TINY, cell=cell, layers=1, deep_out=8, tie_embeddings=True))
    # The attention variants and bridges (TINY: K = 12 bidirectional, D = 5, A = 4).
    out += [
        dict(TINY, attention="luong-dot"),                                     # K != D: key
        dict(TINY, cell="lstm", layers=2, bidir=False, hidden=5, attention="luong-dot"),  # K == D
        dict(TINY, cell="lstm", attention="luong-general"),
        dict(TINY, layers=2, attention="luong-concat"),
        dict(TINY, cell="lstm", attention="scaled-dot"),
        dict(TINY, attention="multihead", heads=2),
        dict(TINY, attention="luong-general", local="m", window=1),
        dict(TINY, cell="lstm", attention="luong-dot", local="p", window=2),
        dict(TINY, layers=2, attention="luong-general", input_feed=True),
        dict(TINY, cell="lstm", attention="multihead", heads=2, local="p", window=2, input_feed=True),
        dict(TINY, deep_out=8, tie_embeddings=True, attention="scaled-dot", local="m", window=2,
             input_feed=True),
        dict(TINY, bridge="zero"),
        dict(TINY, cell="lstm", layers=2, bridge="attn-pool"),
        dict(TINY, bidir=False, attention="luong-concat", bridge="attn-pool", local="p", window=1),
        dict(TINY, cell="lstm", attention="multihead", heads=4, bridge="zero", local="m", window=1),
    ]
    return out


def config_tag(cfg):
    tag = (f"{cfg['cell']} L{cfg['layers']}{' bidir' if cfg['bidir'] else ''}"
           f"{' tied' if cfg['tie_embeddings'] else ''} {cfg['attention']}")
    if cfg["attention"] == "multihead":
        tag += f"/{cfg['heads']}"
    if cfg["local"] != "none":
        tag += f" local-{cfg['local']}/{cfg['window']}"
    if cfg["input_feed"]:
        tag += " input-feed"
    if cfg["bridge"] != "linear":
        tag += f" {cfg['bridge']}"
    return tag


def manual_logits(model, src, src_len, tgt_in):
    """docs/model.md's forward written out with explicit loops over sentences,
    positions, layers and heads, from the stored tensors by name (no nn.GRU/nn.LSTM,
    no packing, no masking, no batched attention): a second implementation to check
    Seq2Seq against, for every attention variant, window and bridge. Dropout off.
    Returns logits (T,B,Vt) with zeros at padded target positions."""
    cfg = model.cfg
    W = dict(model.state_dict())
    L, lstm, bidir = cfg["layers"], cfg["cell"] == "lstm", cfg["bidir"]
    kind, local, Dw = cfg["attention"], cfg["local"], cfg["window"]
    luong = kind != "bahdanau"
    sig = torch.sigmoid

    def cell(x, h, c, pre, sfx):
        gi = W[f"{pre}.weight_ih_{sfx}"] @ x + W[f"{pre}.bias_ih_{sfx}"]
        gh = W[f"{pre}.weight_hh_{sfx}"] @ h + W[f"{pre}.bias_hh_{sfx}"]
        if lstm:  # gates i, f, g, o
            i, f, g, o = (gi + gh).chunk(4)
            c = sig(f) * c + sig(i) * torch.tanh(g)
            return sig(o) * torch.tanh(c), c
        ir, iz, i_n = gi.chunk(3)  # gates r, z, n
        hr, hz, h_n = gh.chunk(3)
        r, z = sig(ir + hr), sig(iz + hz)
        n = torch.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h, c

    def softmax(xs):
        """Softmax of a list of scalars."""
        m = max(float(x) for x in xs)
        ex = [torch.exp(x - m) for x in xs]
        tot = sum(ex)
        return [x / tot for x in ex]

    T, B = tgt_in.shape
    H, D, A, P = cfg["hidden"], cfg["dec_hidden"], cfg["attn"], cfg["deep_out"]
    K = 2 * H if bidir else H
    dtype = W["out.proj.bias"].dtype
    logits = torch.zeros(T, B, W["out.proj.bias"].shape[0], dtype=dtype)
    proj = W["tgt_emb.weight"] if cfg["tie_embeddings"] else W["out.proj.weight"]
    for b in range(B):
        n = int(src_len[b])
        xs = [W["src_emb.weight"][int(src[j, b])] for j in range(n)]
        layer_finals = []
        for l in range(L):
            dirs = [("", range(n))] + ([("_reverse", range(n - 1, -1, -1))] if bidir else [])
            outs, finals = [], []
            for sfx, order in dirs:
                h = torch.zeros(H, dtype=dtype)
                c = torch.zeros(H, dtype=dtype)
                out = [None] * n
                for j in order:
                    h, c = cell(xs[j], h, c, "encoder", f"l{l}{sfx}")
                    out[j] = h
                outs.append(out)
                finals.append((h, c))  # forward: position n-1; backward: position 0
            xs = [torch.cat([o[j] for o in outs]) for j in range(n)]
            layer_finals.append(finals)
        hs = xs

        # Bridge: the initial state of every decoder layer.
        s0, c0 = [], []
        if cfg["bridge"] == "attn-pool":
            u = [torch.tanh(W["bridge_pool.proj.weight"] @ hj + W["bridge_pool.proj.bias"]) for hj in hs]
            alpha = softmax([W["bridge_pool.context.weight"][0] @ uj for uj in u])
            pooled = sum(alpha[j] * hs[j] for j in range(n))
        for l in range(L):
            if cfg["bridge"] == "zero":
                s0.append(torch.zeros(D, dtype=dtype))
                c0.append(torch.zeros(D, dtype=dtype))
                continue
            if cfg["bridge"] == "linear":
                xh = torch.cat([f[0] for f in layer_finals[l]])
                xc = torch.cat([f[1] for f in layer_finals[l]])
            else:
                xh = xc = pooled
            s0.append(torch.tanh(W[f"bridge.{l}.weight"] @ xh + W[f"bridge.{l}.bias"]))
            if lstm:
                c0.append(torch.tanh(W[f"bridge_c.{l}.weight"] @ xc + W[f"bridge_c.{l}.bias"]))
            else:
                c0.append(torch.zeros(D, dtype=dtype))
        state, cstate = s0, c0

        if not luong:
            keys = [W["attention.key.weight"] @ hj + W["attention.key.bias"] for hj in hs]
            for t in range(T):
                if int(tgt_in[t, b]) == PAD:
                    break
                q = W["attention.query.weight"] @ state[L - 1]
                a = softmax([W["attention.v.weight"][0] @ torch.tanh(q + k) for k in keys])
                ctx = sum(a[j] * hs[j] for j in range(n))
                y = W["tgt_emb.weight"][int(tgt_in[t, b])]
                x = torch.cat([y, ctx])
                for l in range(L):
                    state[l], cstate[l] = cell(x, state[l], cstate[l], "decoder", f"l{l}")
                    x = state[l]
                o = torch.tanh(W["out.pre.weight"] @ torch.cat([state[L - 1], ctx, y]) + W["out.pre.bias"])
                logits[t, b] = proj @ o + W["out.proj.bias"]
            continue

        # Luong path.
        Hh = cfg["heads"]
        dh = A // Hh
        feed = torch.zeros(P, dtype=dtype)
        for t in range(T):
            if int(tgt_in[t, b]) == PAD:
                break
            y = W["tgt_emb.weight"][int(tgt_in[t, b])]
            x = torch.cat([y, feed]) if cfg["input_feed"] else y
            for l in range(L):
                state[l], cstate[l] = cell(x, state[l], cstate[l], "decoder", f"l{l}")
                x = state[l]
            s = state[L - 1]
            # The window [lo, hi] of step t (0-based), and p for local = p.
            p = None
            if local == "none":
                lo, hi = 0, n - 1
            elif local == "m":
                pm = min(t, n - 1)
                lo, hi = max(0, pm - Dw), min(n - 1, pm + Dw)
            else:
                p = n * sig(W["attention.pos_v.weight"][0] @ torch.tanh(W["attention.pos.weight"] @ s))
                lo, hi = max(0, math.ceil(float(p) - Dw)), min(n - 1, math.floor(float(p) + Dw))
            win = range(lo, hi + 1)
            # Scores of each head (one head unless multihead) over the window.
            if kind == "luong-dot":
                keys = [hs[j] if K == D else W["attention.key.weight"] @ hs[j] for j in range(n)]
                scores = [[s @ keys[j] for j in win]]
            elif kind == "luong-general":
                scores = [[s @ (W["attention.key.weight"] @ hs[j]) for j in win]]
            elif kind == "luong-concat":
                q = W["attention.query.weight"] @ s
                scores = [[W["attention.v.weight"][0] @ torch.tanh(q + W["attention.key.weight"] @ hs[j])
                           for j in win]]
            elif kind == "scaled-dot":
                q = W["attention.query.weight"] @ s
                scores = [[q @ (W["attention.key.weight"] @ hs[j]) / math.sqrt(A) for j in win]]
            else:  # multihead
                q = W["attention.query.weight"] @ s
                kj = {j: W["attention.key.weight"] @ hs[j] for j in win}
                scores = [[q[i * dh:(i + 1) * dh] @ kj[j][i * dh:(i + 1) * dh] / math.sqrt(dh) for j in win]
                          for i in range(Hh)]
            heads = []
            for sc in scores:
                a = softmax(sc)
                if p is not None:
                    sigma = Dw / 2
                    a = [a[k] * torch.exp(-(j - p) ** 2 / (2 * sigma ** 2)) for k, j in enumerate(win)]
                heads.append(a)
            if kind == "multihead":
                o = []
                for i, a in enumerate(heads):
                    o.append(sum(a[k] * (W["attention.value.weight"] @ hs[j])[i * dh:(i + 1) * dh]
                                 for k, j in enumerate(win)))
                ctx = W["attention.out.weight"] @ torch.cat(o)
            else:
                ctx = sum(heads[0][k] * hs[j] for k, j in enumerate(win))
            ht = torch.tanh(W["out.pre.weight"] @ torch.cat([ctx, s]) + W["out.pre.bias"])
            logits[t, b] = proj @ ht + W["out.proj.bias"]
            feed = ht
    return logits


def loss_at(model, batch):
    model.eval()
    with torch.no_grad():
        return float(model.loss(model(*batch[:3]), batch[3]))


def selftest_one(st, cfg_user, tmp):
    cfg = make_config(cfg_user)
    tag = config_tag(cfg)
    torch.manual_seed(7)
    model = Seq2Seq(cfg, TINY_VS, TINY_VT)

    # Names and shapes are those of the doc's table.
    want = doc_tensor_shapes(cfg, TINY_VS, TINY_VT)
    got = {k: tuple(v.shape) for k, v in model_tensors(model).items()}
    st.check(got == want and list(got) == list(want),
             f"{tag}: tensor names, shapes and layout order follow docs/model.md")

    # File round trip.
    path = os.path.join(tmp, "m.safetensors")
    sv, tv = synth_vocab(TINY_VS), synth_vocab(TINY_VT)
    save_model(path, model, sv, tv)
    loaded, lsv, ltv, meta = load_model(path)
    st.check(lsv == sv and ltv == tv, f"{tag}: vocabularies survive the file")
    st.check(list(json.loads(meta["s2s.config"])) == list(CONFIG_KEYS) and loaded.cfg == cfg,
             f"{tag}: s2s.config has the doc's keys in order")
    same = all(torch.equal(a, b) for a, b in zip(model_tensors(model).values(), model_tensors(loaded).values()))
    st.check(same and list(model_tensors(loaded)) == list(model_tensors(model)), f"{tag}: tensors survive the file")
    raw, _ = load_st(path)
    st.check(("out.proj.weight" in raw) != cfg["tie_embeddings"], f"{tag}: out.proj.weight stored iff untied")
    if cfg["tie_embeddings"]:
        st.check(loaded.out.proj.weight is loaded.tgt_emb.weight, f"{tag}: loaded projection is tgt_emb.weight")

    batch = make_batch(TINY_VS, TINY_VT, B=5, S=7, T=6, seed=3)
    bpath = os.path.join(tmp, "b.safetensors")
    save_st(bpath, batch_tensors(batch), {})
    batch2 = load_batch(bpath)
    st.check(all(torch.equal(a, b) for a, b in zip(batch, batch2)), f"{tag}: batch survives the file")

    # float32 and float64 parity.
    r32 = run_parity(loaded, batch)
    m64 = load_model(path, torch.float64)[0]
    r64 = run_parity(m64, batch)
    names = ["grad." + n for n, _ in loaded.named_parameters()]
    st.check(sorted(k for k in r32 if k.startswith("grad.")) == sorted("grad." + k for k in want),
             f"{tag}: one gradient per stored tensor")
    st.check(all(torch.isfinite(v).all() for v in r32.values()), f"{tag}: loss, logits, gradients finite")
    st.check(all(float(r32[n].abs().max()) > 0 for n in names), f"{tag}: every gradient non-zero")
    bad = [k for k in r32 if not close(r32[k], r64[k], 1e-5, 1e-8)]
    worst = max((rel_err(r32[k], r64[k]), k) for k in r32)
    st.check(not bad, f"{tag}: float32 vs float64 within 1e-5 relative + 1e-8 absolute "
             f"(worst relative {worst[0]:.1e} in {worst[1]}){' failing: ' + ' '.join(bad) if bad else ''}")
    st.check(all(r32[k].dtype == torch.float32 and r64[k].dtype == torch.float64 for k in r32),
             f"{tag}: parity dtypes")

    # Central finite differences in float64 (dropout off): for every tensor, the
    # entry with the largest gradient and one random entry.
    params = dict(m64.named_parameters())
    rng = random.Random(11)
    worst_fd = 0.0
    for name in params:
        p, g = params[name], r64["grad." + name].reshape(-1)
        for j in {int(g.abs().argmax()), rng.randrange(g.numel())}:
            flat = p.data.view(-1)
            old, h = float(flat[j]), 1e-6
            flat[j] = old + h
            lp = loss_at(m64, batch)
            flat[j] = old - h
            lm = loss_at(m64, batch)
            flat[j] = old
            fd = (lp - lm) / (2 * h)
            err = abs(fd - float(g[j])) / max(1.0, abs(fd))
            worst_fd = max(worst_fd, err)
            st.check(err < 1e-7, f"{tag}: d loss/d {name}[{j}] analytic {float(g[j]):.10g} fd {fd:.10g}")
    if st.verbose:
        print(f"selftest: {tag}: worst finite-difference error {worst_fd:.2e}")

    # The modules compute the doc's equations (checked against explicit loops).
    with torch.no_grad():
        manual = manual_logits(m64, *batch[:3])
    valid = (batch[3] != PAD)
    st.check(rel_err(r64["logits"][valid], manual[valid]) < 1e-12,
             f"{tag}: logits equal the doc's equations written out as loops")

    # Padding does not leak: changing padded source/target ids changes no logit at a
    # valid position and not the loss.
    src, src_len, tgt_in, tgt_out = batch
    gen = torch.Generator().manual_seed(5)
    src_p = torch.where(src == PAD, torch.randint(4, TINY_VS, src.shape, generator=gen), src)
    tin_p = torch.where(tgt_in == PAD, torch.randint(4, TINY_VT, tgt_in.shape, generator=gen), tgt_in)
    r64p = run_parity(m64, (src_p, src_len, tin_p, tgt_out))
    valid = (tgt_out != PAD)
    st.check(torch.equal(r64p["logits"][valid], r64["logits"][valid]) and torch.equal(r64p["loss"], r64["loss"]),
             f"{tag}: padding ids do not change valid logits or the loss")

    # Sentences are independent: each one alone (trimmed to its own lengths) gives the
    # same logits as inside the batch.
    m64.eval()
    ok = True
    with torch.no_grad():
        full = m64(src, src_len, tgt_in)
        for b in range(src.shape[1]):
            n, t = int(src_len[b]), int(valid[:, b].sum())
            alone = m64(src[:n, b:b + 1], src_len[b:b + 1], tgt_in[:t, b:b + 1])
            ok &= rel_err(alone[:, 0], full[:t, b]) < 1e-12
    st.check(ok, f"{tag}: a sentence alone gives the logits it has in the batch")

    # Attention weights: 0 on padding and outside windows, sums, the heads' mean.
    selftest_attention(st, tag, m64, batch)

    # The loss is the doc's formula: (1-eps)*NLL + eps*mean over all Vt classes of
    # -log p (<pad> included), summed over non-pad targets, / their number.
    with torch.no_grad():
        lp = torch.log_softmax(r64["logits"], dim=-1)[valid]          # (N,Vt)
        y = tgt_out[valid]
        eps = cfg["label_smoothing"]
        manual = ((1 - eps) * -lp.gather(1, y.unsqueeze(1)).squeeze(1) + eps * -lp.mean(1)).sum() / y.numel()
    st.check(rel_err(manual.reshape(1), r64["loss"]) < 1e-12, f"{tag}: loss equals the label-smoothing formula")

    # Dropout is active in train mode, and off in eval mode.
    m64.train()
    with torch.no_grad():
        d1, d2 = m64(src, src_len, tgt_in), m64(src, src_len, tgt_in)
    st.check(not torch.equal(d1, d2), f"{tag}: dropout active in train mode")
    if cfg["input_feed"]:
        # The fed h~ is taken before dropout: in train mode (dropout 0.3) it has no
        # dropped (zero) entries and no entry scaled past tanh's range.
        with torch.no_grad():
            enc, dstate = m64.encode(src, src_len)
            ok = True
            for t in range(tgt_in.shape[0]):
                _, dstate, _ = m64.decode_step(tgt_in[t], dstate, enc)
                ok &= bool((dstate[1] != 0).all()) and bool((dstate[1].abs() < 1).all())
        st.check(ok, f"{tag}: input feeding uses h~ before dropout")

    # Greedy decoding of the batch equals decoding each sentence alone.
    g = loaded.greedy(src, src_len)
    ok = all(loaded.greedy(src[:int(src_len[b]), b:b + 1], src_len[b:b + 1])[0] == g[b] for b in range(len(g)))
    st.check(ok and all(len(x) <= 2 * int(n) + 10 for x, n in zip(g, src_len)),
             f"{tag}: batched greedy decoding equals per-sentence decoding")


def selftest_attention(st, tag, m64, batch):
    """Attention weights of every step (eval mode): exactly 0 on padding and outside
    the window of docs/model.md (bounds computed here from i, n_b and p); inside, a
    softmax that sums to 1 (per head), or for local = p, a softmax times the
    Gaussian factor, not renormalised; the weights shown are the heads' mean."""
    cfg = m64.cfg
    src, src_len, tgt_in, _ = batch
    S, B = src.shape
    Dw = cfg["window"]
    ok_zero = ok_sum = ok_bounds = ok_mean = ok_pos = True
    m64.eval()
    with torch.no_grad():
        enc, dstate = m64.encode(src, src_len)
        st.check(bool((enc.h[enc.mask] == 0).all()), f"{tag}: encoder outputs are 0 on padding")
        for t in range(tgt_in.shape[0]):
            _, dstate, att = m64.decode_step(tgt_in[t], dstate, enc)
            heads = att.get("heads")
            per_head = heads if heads is not None else att["a"].unsqueeze(2)  # (S,B,Hh)
            if heads is not None:
                ok_mean &= rel_err(att["a"], heads.mean(2)) < 1e-15
            for b in range(B):
                n = int(src_len[b])
                p = None
                if cfg["local"] == "none":
                    lo, hi = 0, n - 1
                elif cfg["local"] == "m":
                    pm = min(t, n - 1)
                    lo, hi = max(0, pm - Dw), min(n - 1, pm + Dw)
                else:
                    p = float(att["p"][b])
                    lo, hi = max(0, math.ceil(p - Dw)), min(n - 1, math.floor(p + Dw))
                    ok_pos &= 0 < p < n
                if "lo" in att:
                    ok_bounds &= int(att["lo"][b]) == lo and int(att["hi"][b]) == hi
                inside = torch.zeros(S, dtype=torch.bool)
                inside[lo:hi + 1] = True
                a = per_head[:, b, :]                                     # (S,Hh)
                ok_zero &= bool((a[~inside] == 0).all()) and bool((a[inside] > 0).all())
                w = a[inside]
                if p is not None:
                    j = torch.arange(lo, hi + 1, dtype=w.dtype)
                    g = torch.exp(-(j - p) ** 2 / (2 * (Dw / 2) ** 2))
                    ok_sum &= bool((w.sum(0) < 1).all())
                    w = w / g.unsqueeze(1)
                ok_sum &= rel_err(w.sum(0), torch.ones(w.shape[1], dtype=w.dtype)) < 1e-12
    where = {"none": "padding", "m": "padding and outside the local-m window",
             "p": "padding and outside the local-p window"}[cfg["local"]]
    st.check(ok_zero, f"{tag}: attention weights are exactly 0 on {where}, positive inside")
    if cfg["local"] == "p":
        st.check(ok_sum, f"{tag}: local-p weights are a window softmax times the Gaussian factor, not renormalised")
        st.check(ok_pos, f"{tag}: local-p position p lies in (0, n)")
    else:
        st.check(ok_sum, f"{tag}: attention weights sum to 1{' per head' if cfg['heads'] > 1 else ''}")
    if cfg["local"] != "none":
        st.check(ok_bounds, f"{tag}: window bounds follow the doc's formulas")
    if cfg["attention"] == "multihead":
        st.check(ok_mean, f"{tag}: the weights shown are the heads' mean")


def selftest_validation(st):
    """Refusals of inconsistent variant keys, and files without the variant keys."""
    cases = [
        ({"attention": "multihead", "heads": 3, "attn": 256},
         'config: heads 3 does not divide attn 256'),
        ({"attention": "scaled-dot", "heads": 2},
         'config: heads 2 needs attention "multihead" (heads is 1 with "scaled-dot")'),
        ({"input_feed": True},
         'config: input_feed needs a Luong-path attention ("luong-dot" or "luong-general" or '
         '"luong-concat" or "scaled-dot" or "multihead"), not "bahdanau"'),
        ({"local": "m", "window": 2},
         'config: local needs a Luong-path attention ("luong-dot" or "luong-general" or '
         '"luong-concat" or "scaled-dot" or "multihead"), not "bahdanau"'),
        ({"attention": "luong-dot", "local": "p"}, 'config: window must be ≥ 1 with local "p"'),
        ({"attention": "luong-dot", "window": 3},
         'config: window 3 needs local "m" or "p" (window is 0 with local "none")'),
        ({"attention": "dot"}, 'config: \'attention\' must be "bahdanau" or "luong-dot" or "luong-general" '
                               'or "luong-concat" or "scaled-dot" or "multihead", not "dot"'),
        ({"local": "x"}, 'config: \'local\' must be "none" or "m" or "p", not "x"'),
        ({"bridge": "mean"}, 'config: \'bridge\' must be "linear" or "zero" or "attn-pool", not "mean"'),
        ({"heads": 0}, "config: 'heads' must be an integer in 1..65536, not 0"),
        ({"input_feed": 1}, "config: 'input_feed' must be true or false, not 1"),
    ]
    for user, msg in cases:
        try:
            make_config(user)
            got = None
        except RefError as e:
            got = str(e)
        st.check(got == msg, f"config {json.dumps(user)} is refused with '{msg}' (got {got!r})")
    ok = make_config({"attention": "multihead", "heads": 4, "attn": 256, "local": "p", "window": 3,
                      "input_feed": True, "bridge": "attn-pool"})
    st.check(list(ok) == list(CONFIG_KEYS) and list(CONFIG_KEYS[7:13]) ==
             ["attention", "heads", "local", "window", "input_feed", "bridge"],
             "config keys in s2s's order, the variant keys right after 'attention'")
    legacy = {k: v for k, v in DEFAULT_CONFIG.items() if k not in VARIANT_KEYS}
    try:
        cfg = make_config(legacy, "file", complete=True)
    except RefError:
        cfg = None
    st.check(cfg == DEFAULT_CONFIG, "a file's s2s.config without the variant keys takes their defaults")
    try:
        make_config(dict(legacy, attention="luong-dot", local="m"), "file", complete=True)
        got = None
    except RefError as e:
        got = str(e)
    st.check(got == 'file: window must be ≥ 1 with local "m"', "a file with local but no window is refused")
    try:
        make_config({k: v for k, v in legacy.items() if k != "deep_out"}, "file", complete=True)
        got = None
    except RefError as e:
        got = str(e)
    st.check(got == "file: missing key 'deep_out'", "a file without one of the size keys is refused")


def selftest_cli(st, tmp):
    """The subcommands end to end, in process."""
    m, b, o, o64 = (os.path.join(tmp, n) for n in ("cli.safetensors", "batch.safetensors",
                                                    "out.safetensors", "out64.safetensors"))
    vf = os.path.join(tmp, "vocab.tgt")
    with open(vf, "w", encoding="utf-8") as f:
        f.write("".join(f"{t}\t{c}\n" for t, c in
                        zip(list(SPECIALS) + ["le", "chat", "noir", "un", "chien"], [0, 0, 0, 0, 9, 5, 3, 2, 1])))
    cfg = json.dumps(dict(TINY, cell="lstm", layers=2))
    rc = main(["init", "--config", cfg, "--src-vocab", "11", "--tgt-vocab-file", vf, "--seed", "5", "-o", m])
    st.check(rc == 0 and os.path.exists(m), "cli: init writes a model")
    model, sv, tv, meta = load_model(m)
    st.check(sv == synth_vocab(11) and tv[4:] == ["le", "chat", "noir", "un", "chien"],
             "cli: init takes the target vocabulary from the file, synthesizes the source one")
    st.check(json.loads(meta["s2s.config"])["cell"] == "lstm", "cli: init stores the config")
    rc = main(["init", "--config", cfg, "--src-vocab", "11", "--tgt-vocab", "9", "--seed", "5",
               "-o", m + ".2"])
    same = all(torch.equal(x, y) for x, y in zip(model_tensors(model).values(),
                                                 model_tensors(load_model(m + ".2")[0]).values()))
    st.check(rc == 0 and same, "cli: init is deterministic for a seed")
    rc = main(["init", "--config", cfg, "--src-vocab", "11", "--tgt-vocab", "9", "--seed", "5",
               "--scale", "2", "-o", m + ".3"])
    doubled = all(torch.equal(2 * x, y) for x, y in zip(model_tensors(load_model(m + ".2")[0]).values(),
                                                        model_tensors(load_model(m + ".3")[0]).values()))
    st.check(rc == 0 and doubled, "cli: init --scale 2 doubles every weight")
    rc = main(["make-batch", "--src-vocab", "11", "--tgt-vocab", "9", "--batch", "4", "--src-len", "6",
               "--tgt-len", "5", "--seed", "2", "-o", b])
    src, src_len, tgt_in, tgt_out = load_batch(b)
    st.check(rc == 0 and int(src_len.max()) == 6 and int(src_len.min()) == 1
             and int((tgt_out != PAD).sum(0).max()) == 5 and int((tgt_out != PAD).sum(0).min()) == 1,
             "cli: make-batch has full-length and length-1 sentences")
    rc = main(["parity", m, b, o])
    rc64 = main(["parity", "--double", m, b, o64])
    r32, meta32 = load_st(o)
    r64, meta64 = load_st(o64)
    st.check(rc == 0 and rc64 == 0 and r32["logits"].shape == (5, 4, 9) and r32["loss"].shape == (1,)
             and r64["loss"].dtype == torch.float64 and meta32.get("s2s.parity.dtype") == "float32"
             and meta64.get("s2s.parity.dtype") == "float64",
             "cli: parity writes loss, logits and gradients (float64 with --double)")
    st.check(all(close(r32[k], r64[k], 1e-5, 1e-8) for k in r32), "cli: parity float32 vs --double agree")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["parity", m, m, o])
    st.check(rc == 1 and err.getvalue() == f"{PROG}: {m}: missing tensor src\n",
             "cli: parity rejects a batch file without src")

    # A variant through the command line: every key stored in s2s's order, parity runs.
    vcfg = dict(TINY, cell="lstm", attention="multihead", heads=2, local="p", window=2, input_feed=True,
                bridge="attn-pool")
    rc = main(["init", "--config", json.dumps(vcfg), "--src-vocab", "11", "--tgt-vocab", "9", "--seed", "5",
               "-o", m + ".v"])
    text = load_st(m + ".v")[1]["s2s.config"]
    st.check(rc == 0 and list(json.loads(text)) == list(CONFIG_KEYS) and text.startswith(
        '{"cell": "lstm", "layers": 1, "bidir": true, "emb": 8, "hidden": 6, "dec_hidden": 5, "attn": 4, '
        '"attention": "multihead", "heads": 2, "local": "p", "window": 2, "input_feed": true, '
        '"bridge": "attn-pool", "deep_out": 7, '), "cli: init stores a variant's config with every key in order")
    rc = main(["parity", "--double", m + ".v", b, o64])
    r64, _ = load_st(o64)
    st.check(rc == 0 and "grad.attention.pos.weight" in r64 and "grad.bridge_pool.context.weight" in r64,
             "cli: parity of a variant writes its tensors' gradients")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["init", "--config", json.dumps(dict(vcfg, heads=3)), "--src-vocab", "11", "--tgt-vocab", "9",
                   "-o", m + ".bad"])
    st.check(rc == 1 and err.getvalue() == f"{PROG}: --config: heads 3 does not divide attn 4\n"
             and not os.path.exists(m + ".bad"), "cli: init refuses heads that do not divide attn")


def selftest(args):
    set_threads(1)
    st = SelfTest(args.verbose)
    with tempfile.TemporaryDirectory(prefix="torch_ref-") as tmp:
        selftest_validation(st)
        for cfg in selftest_configs():
            selftest_one(st, cfg, tmp)
        selftest_cli(st, tmp)
    if st.failures:
        print(f"selftest: {len(st.failures)} of {st.checks} checks failed", flush=True)
        return 1
    print(f"selftest: ok ({st.checks} checks)", flush=True)
    return 0


# ---------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------

def set_threads(n):
    torch.set_num_threads(n)


def cmd_init(args):
    cfg = parse_config_arg(args.config)
    vocabs = []
    for side, n, path in (("src", args.src_vocab, args.src_vocab_file), ("tgt", args.tgt_vocab, args.tgt_vocab_file)):
        if path:
            tokens = read_vocab_file(path)
            if n is not None and n != len(tokens):
                raise RefError(f"--{side}-vocab {n} but {path} has {len(tokens)} tokens")
        elif n is None:
            raise RefError(f"give --{side}-vocab N or --{side}-vocab-file FILE")
        else:
            if n < 4:
                raise RefError(f"--{side}-vocab must be at least 4")
            tokens = synth_vocab(n)
        vocabs.append(tokens)
    if not (args.scale > 0 and math.isfinite(args.scale)):
        raise RefError("--scale must be a positive number")
    set_threads(1)
    torch.manual_seed(args.seed)
    model = Seq2Seq(cfg, len(vocabs[0]), len(vocabs[1]))
    if args.scale != 1:
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(args.scale)
    save_model(args.output, model, vocabs[0], vocabs[1])
    return 0


def cmd_make_batch(args):
    for flag in ("batch", "src_len", "tgt_len"):
        if getattr(args, flag) < 1:
            raise RefError(f"--{flag.replace('_', '-')} must be at least 1")
    batch = make_batch(args.src_vocab, args.tgt_vocab, args.batch, args.src_len, args.tgt_len, args.seed)
    save_st(args.output, batch_tensors(batch), {})
    return 0


def cmd_parity(args):
    if args.threads < 1:
        raise RefError("--threads must be positive")
    set_threads(args.threads)
    dtype = torch.float64 if args.double else torch.float32
    model, sv, tv, _ = load_model(args.model, dtype)
    batch = load_batch(args.batch)
    check_batch_ids(batch, len(sv), len(tv), args.batch)
    out = run_parity(model, batch, args.label_smoothing)
    eps = model.cfg["label_smoothing"] if args.label_smoothing is None else args.label_smoothing
    meta = {"s2s.parity.dtype": "float64" if args.double else "float32",
            "s2s.parity.label_smoothing": repr(float(eps)),
            "s2s.parity.tokens": str(int((batch[3] != PAD).sum()))}
    save_st(args.output, out, meta)
    if args.verbose:
        print(f"loss {float(out['loss']):.9g}")
    return 0


def build_parser():
    p = argparse.ArgumentParser(prog=PROG, description="PyTorch reference of the s2s model (docs/model.md).")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    q = sub.add_parser("init", help="write a randomly initialised model")
    q.add_argument("--config", help="JSON object or JSON file (default: the reference config)")
    q.add_argument("--src-vocab", type=int, metavar="N", help="source vocabulary size")
    q.add_argument("--tgt-vocab", type=int, metavar="N", help="target vocabulary size")
    q.add_argument("--src-vocab-file", metavar="FILE", help="s2s vocab file (token<TAB>count)")
    q.add_argument("--tgt-vocab-file", metavar="FILE", help="s2s vocab file (token<TAB>count)")
    q.add_argument("--seed", type=int, default=1)
    q.add_argument("--scale", type=float, default=1.0, metavar="X",
                   help="multiply every initial weight by X (parity tests: larger weights make the "
                        "attention gradients, tiny at the default initialisation, sizeable)")
    q.add_argument("-o", "--output", required=True, metavar="MODEL")
    q.set_defaults(fn=cmd_init)

    q = sub.add_parser("make-batch", help="write a random batch for parity tests")
    q.add_argument("--src-vocab", type=int, required=True, metavar="N")
    q.add_argument("--tgt-vocab", type=int, required=True, metavar="N")
    q.add_argument("--batch", type=int, required=True, metavar="B")
    q.add_argument("--src-len", type=int, required=True, metavar="S")
    q.add_argument("--tgt-len", type=int, required=True, metavar="T")
    q.add_argument("--seed", type=int, default=1)
    q.add_argument("-o", "--output", required=True, metavar="BATCH")
    q.set_defaults(fn=cmd_make_batch)

    q = sub.add_parser("parity", help="loss, logits and gradients of one batch")
    q.add_argument("model", metavar="MODEL")
    q.add_argument("batch", metavar="BATCH")
    q.add_argument("output", metavar="OUT")
    q.add_argument("--double", action="store_true", help="compute and write in float64")
    q.add_argument("--label-smoothing", type=float, metavar="EPS", help="override the model's")
    q.add_argument("--threads", type=int, default=1)
    q.add_argument("-v", "--verbose", action="store_true", help="print the loss")
    q.set_defaults(fn=cmd_parity)

    q = sub.add_parser("train", help="train on an `s2s prepare` directory")
    q.add_argument("data_dir", metavar="DATA_DIR")
    q.add_argument("--config", help="JSON object or JSON file (default: the reference config)")
    q.add_argument("--init", metavar="MODEL", help="start from this model file instead of a random one")
    q.add_argument("--time", type=float, metavar="MINUTES", help="training time limit")
    q.add_argument("--steps", type=int, metavar="N", help="number of updates")
    q.add_argument("--batch", type=int, default=64, metavar="B", help="sentences per batch (64)")
    q.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (1e-3)")
    q.add_argument("--clip", type=float, default=1.0, help="gradient norm clip (1.0)")
    q.add_argument("--threads", type=int, default=1, metavar="N", help="torch threads (1)")
    q.add_argument("--seed", type=int, default=1)
    q.add_argument("--log-every", type=int, default=100, metavar="N", help="progress line every N steps")
    q.add_argument("--s2s", default="./s2s", metavar="PATH", help="the s2s binary, for tokenization")
    q.add_argument("-o", "--output", metavar="MODEL", help="write the trained model")
    q.add_argument("--hyp", metavar="FILE", help="write detokenized greedy translations of test.tsv")
    q.set_defaults(fn=train)

    q = sub.add_parser("selftest", help="internal consistency checks")
    q.add_argument("-v", "--verbose", action="store_true", help="print every check")
    q.set_defaults(fn=selftest)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except RefError as e:
        print(f"{PROG}: {e}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
