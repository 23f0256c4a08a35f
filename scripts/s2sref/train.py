"""Data through the s2s binary (tokenizer), corpora, batches and training."""

from .model import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403

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


def data_text_options(d):
    """direction and keep_case of an s2s prepare directory (its prepare.json), or {}."""
    try:
        with open(os.path.join(d, "prepare.json"), encoding="utf-8") as f:
            opts = json.load(f).get("options", {})
    except (OSError, ValueError):
        return {}
    return {k: opts[k] for k in ("direction", "keep_case") if k in opts}


def config_for_data(config_arg, d):
    """--config completed with the data's direction and case; a key that --config gives
    otherwise is an error."""
    user, where = config_arg_object(config_arg) if config_arg else ({}, "--config")
    if not isinstance(user, dict):
        raise RefError(f"{where}: expected a JSON object")
    data = data_text_options(d)
    for k, v in data.items():
        if k in user and user[k] != v:
            raise RefError(f"{where}: '{k}' is {json.dumps(user[k])}, but {d} was prepared with {json.dumps(v)}")
    return make_config({**data, **user}, where)


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
        for k, v in data_text_options(d).items():
            if cfg[k] != v:
                raise RefError(f"--init {args.init}: its {k} {json.dumps(cfg[k])} differs from {d}'s {json.dumps(v)}")
    else:
        cfg = config_for_data(args.config, d)
        model = build_model(cfg, len(src_vocab), len(tgt_vocab))
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
