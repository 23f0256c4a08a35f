"""Model files, random batches and the parity run of one batch."""

from .model import *  # noqa: F401,F403

def model_tensors(model):
    """The tensors stored in the model file: the state_dict without the tied
    out.proj.weight and the shared tgt_emb.weight, float32."""
    sd = model.state_dict()
    if model.cfg["tie_embeddings"]:
        del sd["out.proj.weight"]
    if model.cfg.get("share_embeddings"):
        del sd["tgt_emb.weight"]
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
    model = build_model(cfg, len(src_vocab), len(tgt_vocab))
    state = dict(tensors)
    if cfg.get("share_embeddings"):
        state["tgt_emb.weight"] = state["src_emb.weight"]
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
