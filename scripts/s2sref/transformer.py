"""The Transformer reference: built from PyTorch's nn.TransformerEncoderLayer and
nn.TransformerDecoderLayer, so its state_dict has the names s2s writes (docs/model.md
"The Transformer"). Time-major like the recurrent reference: src (S,B), tgt (T,B)."""

import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .model import LANGS, RefError, greedy_loop, smoothed_loss

# The keys of a Transformer's s2s.config, in the order s2s writes them.
TF_DEFAULT_CONFIG = {
    "arch": "transformer",
    "layers": 3,
    "model_dim": 256,
    "heads": 4,
    "ff": 1024,
    "norm": "post",
    "positions": "sinusoidal",
    "max_positions": 0,
    "dropout": 0.1,
    "label_smoothing": 0.1,
    "tie_embeddings": False,
    "share_embeddings": False,
    "direction": "en-fr",
    "src_lang": "en",
    "tgt_lang": "fr",
    "keep_case": False,
}
TF_CONFIG_KEYS = tuple(TF_DEFAULT_CONFIG)
# Keys a model file may lack: s2s writes share_embeddings only when it is true.
TF_OPTIONAL_KEYS = ("share_embeddings",)


def make_tf_config(user, where="config", complete=False):
    """Validates a Transformer config dict (missing keys take the defaults unless
    complete=True). Returns a new dict in TF_CONFIG_KEYS order."""
    unknown = [k for k in user if k not in TF_DEFAULT_CONFIG]
    if unknown:
        raise RefError(f"{where}: unknown key '{unknown[0]}'")
    if complete:
        missing = [k for k in TF_CONFIG_KEYS if k not in user and k not in TF_OPTIONAL_KEYS]
        if missing:
            raise RefError(f"{where}: missing key '{missing[0]}'")
    cfg = dict(TF_DEFAULT_CONFIG)
    cfg.update(user)
    if not complete and "direction" in user and "src_lang" not in user:
        cfg["src_lang"], cfg["tgt_lang"] = str(user["direction"]).split("-", 1)

    def need(key, ok, what):
        if not ok(cfg[key]):
            raise RefError(f"{where}: '{key}' must be {what}, not {json.dumps(cfg[key])}")

    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    need("layers", lambda v: is_int(v) and 1 <= v <= 12, "an integer in 1..12")
    for k in ("model_dim", "heads", "ff"):
        need(k, lambda v: is_int(v) and v >= 1, "a positive integer")
    need("max_positions", lambda v: is_int(v) and v >= 0, "an integer >= 0")
    need("norm", lambda v: v in ("post", "pre"), '"post" or "pre"')
    need("positions", lambda v: v in ("sinusoidal", "learned"), '"sinusoidal" or "learned"')
    for k in ("tie_embeddings", "share_embeddings", "keep_case"):
        need(k, lambda v: isinstance(v, bool), "true or false")
    for k in ("dropout", "label_smoothing"):
        need(k, lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1,
             "a number in [0,1)")
    need("src_lang", lambda v: v in LANGS, '"en" or "fr"')
    need("tgt_lang", lambda v: v in LANGS, '"en" or "fr"')
    need("direction", lambda v: v == f"{cfg['src_lang']}-{cfg['tgt_lang']}", "src_lang-tgt_lang")
    if cfg["model_dim"] % cfg["heads"]:
        raise RefError(f"{where}: heads {cfg['heads']} does not divide model_dim {cfg['model_dim']}")
    if (cfg["positions"] == "learned") != (cfg["max_positions"] > 0):
        raise RefError(f"{where}: max_positions must be 0 with sinusoidal positions and >= 1 with learned ones")
    cfg["dropout"] = float(cfg["dropout"])
    cfg["label_smoothing"] = float(cfg["label_smoothing"])
    return {k: cfg[k] for k in TF_CONFIG_KEYS}


def tf_tensor_shapes(cfg, vs, vt):
    """The Transformer's tensor table of docs/model.md, in layout order, written out
    independently of the modules."""
    d, F_, L = cfg["model_dim"], cfg["ff"], cfg["layers"]
    t = {"src_emb.weight": (vs, d)}
    if not cfg["share_embeddings"]:
        t["tgt_emb.weight"] = (vt, d)
    elif vs != vt:
        raise RefError(f"share_embeddings needs one vocabulary: {vs} source and {vt} target tokens")
    if cfg["positions"] == "learned":
        t["src_pos.weight"] = (cfg["max_positions"], d)
        t["tgt_pos.weight"] = (cfg["max_positions"], d)

    def attn(prefix):
        t[f"{prefix}.in_proj_weight"], t[f"{prefix}.in_proj_bias"] = (3 * d, d), (3 * d,)
        t[f"{prefix}.out_proj.weight"], t[f"{prefix}.out_proj.bias"] = (d, d), (d,)

    for stack, norms in (("encoder", 2), ("decoder", 3)):
        for l in range(L):
            p = f"{stack}.layers.{l}"
            attn(f"{p}.self_attn")
            if stack == "decoder":
                attn(f"{p}.multihead_attn")
            t[f"{p}.linear1.weight"], t[f"{p}.linear1.bias"] = (F_, d), (F_,)
            t[f"{p}.linear2.weight"], t[f"{p}.linear2.bias"] = (d, F_), (d,)
            for k in range(1, norms + 1):
                t[f"{p}.norm{k}.weight"], t[f"{p}.norm{k}.bias"] = (d,), (d,)
        if cfg["norm"] == "pre":
            t[f"{stack}.norm.weight"], t[f"{stack}.norm.bias"] = (d,), (d,)
    if not cfg["tie_embeddings"]:
        t["out.proj.weight"] = (vt, d)
    t["out.proj.bias"] = (vt,)
    return t


def sinusoid_table(n, d):
    """pe[p, 2i] = sin(p / 10000^(2i/d)), pe[p, 2i+1] = cos(...), in float64 (as s2s
    computes it) then float32."""
    pos = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    i2 = (torch.arange(d) // 2 * 2).to(torch.float64)
    angle = pos / torch.pow(torch.tensor(10000.0, dtype=torch.float64), i2 / d)
    pe = torch.where(torch.arange(d) % 2 == 0, torch.sin(angle), torch.cos(angle))
    return pe.to(torch.float32)


class Projection(nn.Module):
    def __init__(self, d, vt):
        super().__init__()
        self.proj = nn.Linear(d, vt)


class Transformer(nn.Module):
    def __init__(self, cfg, src_vocab, tgt_vocab):
        super().__init__()
        cfg = make_tf_config(cfg)
        self.cfg = cfg
        d, H, F_, L, p = (cfg[k] for k in ("model_dim", "heads", "ff", "layers", "dropout"))
        pre = cfg["norm"] == "pre"
        self.src_emb = nn.Embedding(src_vocab, d)
        if cfg["share_embeddings"]:
            if src_vocab != tgt_vocab:
                raise RefError(f"share_embeddings needs one vocabulary: {src_vocab} source and "
                               f"{tgt_vocab} target tokens")
            self.tgt_emb = self.src_emb
        else:
            self.tgt_emb = nn.Embedding(tgt_vocab, d)
        if cfg["positions"] == "learned":
            self.src_pos = nn.Embedding(cfg["max_positions"], d)
            self.tgt_pos = nn.Embedding(cfg["max_positions"], d)
        enc_layer = nn.TransformerEncoderLayer(d, H, F_, p, activation="relu", norm_first=pre)
        dec_layer = nn.TransformerDecoderLayer(d, H, F_, p, activation="relu", norm_first=pre)
        # post-norm (the paper) has no final norm; pre-norm ends each stack with one
        self.encoder = nn.TransformerEncoder(enc_layer, L, norm=nn.LayerNorm(d) if pre else None,
                                             enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(dec_layer, L, norm=nn.LayerNorm(d) if pre else None)
        self.out = Projection(d, tgt_vocab)
        if cfg["tie_embeddings"]:
            self.out.proj.weight = self.tgt_emb.weight
        self.drop = nn.Dropout(p)
        self.register_buffer("pe", sinusoid_table(1024, d), persistent=False)

    def _embed(self, emb, pos, ids, t0=0):
        n = ids.shape[0]
        x = emb(ids) * math.sqrt(self.cfg["model_dim"])
        if self.cfg["positions"] == "learned":
            at = torch.arange(t0, t0 + n, device=ids.device)
            x = x + pos(at).unsqueeze(1)
        else:
            x = x + self.pe[t0:t0 + n].to(x.dtype).unsqueeze(1)
        return self.drop(x)

    def encode(self, src, src_len):
        S = src.shape[0]
        mask = torch.arange(S).unsqueeze(0) >= src_len.unsqueeze(1)   # (B,S) true at padding
        x = self._embed(self.src_emb, getattr(self, "src_pos", None), src)
        return self.encoder(x, src_key_padding_mask=mask), mask

    def decode(self, tgt_in, memory, mask):
        """Logits (T,B,Vt) of every position of tgt_in (causal)."""
        T = tgt_in.shape[0]
        causal = torch.triu(torch.full((T, T), float("-inf"), dtype=memory.dtype), diagonal=1)
        y = self._embed(self.tgt_emb, getattr(self, "tgt_pos", None), tgt_in)
        h = self.decoder(y, memory, tgt_mask=causal, memory_key_padding_mask=mask)
        return self.out.proj(h)

    def forward(self, src, src_len, tgt_in):
        memory, mask = self.encode(src, src_len)
        return self.decode(tgt_in, memory, mask)

    def loss(self, logits, tgt_out, label_smoothing=None):
        return smoothed_loss(self.cfg, logits, tgt_out, label_smoothing)

    @torch.no_grad()
    def greedy(self, src, src_len, max_len=None):
        """Greedy decoding of a batch, each step recomputing the whole prefix (the
        reference for s2s's cached steps)."""
        memory, mask = self.encode(src, src_len)
        prefix = [None]

        def step(y):
            prefix[0] = y.unsqueeze(0) if prefix[0] is None else torch.cat([prefix[0], y.unsqueeze(0)])
            return self.decode(prefix[0], memory, mask)[-1]
        return greedy_loop(step, src_len, max_len)

    # -- incremental decoding with a cache (the bench's PyTorch side) ------------
    def _attend(self, attn, q, k, v, key_pad=None):
        """q (B,1,d); k, v (B,n,d): multi-head attention of one query row per
        sentence (no dropout), through the module's weights."""
        B, n, d = k.shape
        H = self.cfg["heads"]
        qh = q.view(B, 1, H, d // H).transpose(1, 2)            # (B,H,1,dh)
        kh = k.view(B, n, H, d // H).transpose(1, 2)
        vh = v.view(B, n, H, d // H).transpose(1, 2)
        e = qh @ kh.transpose(2, 3) / math.sqrt(d // H)         # (B,H,1,n)
        if key_pad is not None:
            e = e.masked_fill(key_pad[:, None, None, :], float("-inf"))
        ctx = (torch.softmax(e, dim=-1) @ vh).transpose(1, 2).reshape(B, 1, d)
        return F.linear(ctx, attn.out_proj.weight, attn.out_proj.bias)

    @torch.no_grad()
    def start_cached(self, src, src_len):
        """Encodes once; returns the decoding state: per layer the keys and values of
        the encoder output, and empty self-attention caches."""
        memory, mask = self.encode(src, src_len)
        mem = memory.transpose(0, 1)                             # (B,S,d)
        d = self.cfg["model_dim"]
        cross = []
        for layer in self.decoder.layers:
            W, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
            cross.append((F.linear(mem, W[d:2 * d], b[d:2 * d]), F.linear(mem, W[2 * d:], b[2 * d:])))
        return {"mask": mask, "cross": cross, "k": [None] * len(cross), "v": [None] * len(cross), "t": 0}

    @torch.no_grad()
    def step_cached(self, y_tok, st):
        """One decoder step for the previous tokens y_tok (B); logits (B,Vt). Each
        layer appends its self-attention keys and values to the cache."""
        d, pre, t = self.cfg["model_dim"], self.cfg["norm"] == "pre", st["t"]
        x = self.tgt_emb(y_tok).unsqueeze(1) * math.sqrt(d)      # (B,1,d)
        if self.cfg["positions"] == "learned":
            x = x + self.tgt_pos.weight[t]
        else:
            x = x + self.pe[t].to(x.dtype)
        for i, layer in enumerate(self.decoder.layers):
            W, b = layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias

            def self_block(h):
                q, k, v = F.linear(h, W, b).split(d, dim=-1)
                st["k"][i] = k if st["k"][i] is None else torch.cat([st["k"][i], k], dim=1)
                st["v"][i] = v if st["v"][i] is None else torch.cat([st["v"][i], v], dim=1)
                return self._attend(layer.self_attn, q, st["k"][i], st["v"][i])

            def cross_block(h):
                Wc, bc = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
                q = F.linear(h, Wc[:d], bc[:d])
                return self._attend(layer.multihead_attn, q, *st["cross"][i], st["mask"])

            def ff_block(h):
                return layer.linear2(F.relu(layer.linear1(h)))

            for block, norm in ((self_block, layer.norm1), (cross_block, layer.norm2), (ff_block, layer.norm3)):
                x = x + block(norm(x)) if pre else norm(x + block(x))
        if pre:
            x = self.decoder.norm(x)
        st["t"] = t + 1
        return self.out.proj(x[:, 0])

    def select_cached(self, st, rows):
        """Keeps (and reorders) the rows of the decoding state (beam search, or
        finished sentences leaving)."""
        st["mask"] = st["mask"][rows]
        st["cross"] = [(k[rows], v[rows]) for k, v in st["cross"]]
        st["k"] = [k[rows] if k is not None else None for k in st["k"]]
        st["v"] = [v[rows] if v is not None else None for v in st["v"]]

    @torch.no_grad()
    def greedy_cached(self, src, src_len, max_len=None):
        """Greedy decoding with the cache; the same results as greedy()."""
        st = self.start_cached(src, src_len)
        return greedy_loop(lambda y: self.step_cached(y, st), src_len, max_len)
