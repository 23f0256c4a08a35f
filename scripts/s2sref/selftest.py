"""Internal consistency checks of the reference, for every variant."""

from .model import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
from .train import *  # noqa: F401,F403

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
    from .cli import main  # the command line under test (cli imports this module)
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
