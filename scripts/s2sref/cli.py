"""The command line: init, make-batch, parity, train, selftest."""

from .model import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
from .train import *  # noqa: F401,F403
from .selftest import *  # noqa: F401,F403

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
    model = build_model(cfg, len(vocabs[0]), len(vocabs[1]))
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
