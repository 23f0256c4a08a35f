#!/usr/bin/python3
"""The PyTorch side of `make bench`: the model of scripts/torch_ref.py, timed on the
files that `bench/bench data` writes (the same batches and sentences as the C side).

  train BATCHES INIT [--threads N] [--warmup W] [--runs R] [--seed S]
      Training steps (forward, backward, clip_grad_norm_, Adam) over the batches.
  greedy INIT DEC [--batch B] [--max-len M] [--threads N] [--runs R] [--first N]
      torch_ref's greedy decoding of the (first N) sentences of DEC, B at a time.
  beam INIT DEC [--beam K] [--max-len M] [--threads N] [--runs R] [--alpha A] [--first N]
      Beam search, one sentence at a time (the search of src/decode/beam.h).
  one INIT IDS [--max-len M] [--threads N]
      A whole process: import torch, load the model, greedy-decode one sentence
      (ids, space-separated) and print the output ids.

Every result is one JSON object on stdout. Run with /usr/bin/python3 (needs torch).
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import torch_ref  # noqa: E402  (scripts/torch_ref.py)
import safetensors_io  # noqa: E402

PAD, BOS, EOS = torch_ref.PAD, torch_ref.BOS, torch_ref.EOS


def maxrss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def cpu_times():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def emit(obj):
    print(json.dumps(obj), flush=True)


def load_model(path):
    model, sv, tv, _ = torch_ref.load_model(path)
    return model, len(sv), len(tv)


def load_batches(path):
    tensors, meta = safetensors_io.load(path)
    if meta.get("s2s.format") != "s2s-bench-batches-1":
        raise SystemExit(f"torch_bench.py: {path}: not a batches file of `bench data`")
    out = []
    for k in range(int(meta["bench.batches"])):
        src, src_len, tgt_in, tgt_out = (tensors[f"b{k}.{n}"] for n in ("src", "src_len", "tgt_in", "tgt_out"))
        out.append((src, src_len, tgt_in, tgt_out, int((tgt_out != PAD).sum())))
    return out, int(meta["bench.src_vocab"]), int(meta["bench.tgt_vocab"])


def load_sentences(path):
    tensors, meta = safetensors_io.load(path)
    if meta.get("s2s.format") != "s2s-bench-sentences-1":
        raise SystemExit(f"torch_bench.py: {path}: not a sentences file of `bench data`")
    ids, lens = tensors["ids"].tolist(), tensors["len"].tolist()
    out, at = [], 0
    for n in lens:
        out.append(ids[at:at + n])
        at += n
    return out


def hyps_hash(hyps):
    """64-bit FNV-1a over (length, ids...) of every sentence as little-endian int64,
    as bench/bench.c computes it."""
    x = 1469598103934665603
    for h in hyps:
        for v in [len(h)] + list(h):
            for b in int(v).to_bytes(8, "little", signed=True):
                x ^= b
                x = (x * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{x:016x}"


# ---------------------------------------------------------------------------

def cmd_train(a):
    torch.set_num_threads(a.threads)
    batches, vs, vt = load_batches(a.batches)
    model, mvs, mvt = load_model(a.init)
    if (mvs, mvt) != (vs, vt):
        raise SystemExit(f"torch_bench.py: {a.init}: vocabulary sizes {mvs}/{mvt} differ from the batches' {vs}/{vt}")
    torch.manual_seed(a.seed)
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    model.eval()
    with torch.no_grad():
        src, src_len, tgt_in, tgt_out, _ = batches[0]
        loss0 = float(model.loss(model(src, src_len, tgt_in), tgt_out))
    model.train()

    def step(b):
        src, src_len, tgt_in, tgt_out, _ = b
        if a.bf16:  # the standard mixed-precision recipe: products in bf16, weights and Adam in fp32
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = model(src, src_len, tgt_in)
            loss = model.loss(logits.float(), tgt_out)
        else:
            loss = model.loss(model(src, src_len, tgt_in), tgt_out)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        return float(loss)

    warmup = min(a.warmup, len(batches))
    for b in batches[:warmup]:
        step(b)
    tokens = sum(b[4] for b in batches)
    secs, last = [], 0.0
    u0, s0 = cpu_times()
    for _ in range(a.runs):
        t0 = time.perf_counter()
        for b in batches:
            last = step(b)
        secs.append(time.perf_counter() - t0)
    u1, s1 = cpu_times()
    tok_s = [tokens / s for s in secs]
    emit({"job": "train", "impl": "torch", "threads": torch.get_num_threads(), "autocast": "bf16" if a.bf16 else None,
          "batches": len(batches),
          "warmup": warmup, "tokens_per_run": tokens, "params": sum(p.numel() for p in params),
          "config": model.cfg, "tok_s_runs": [round(x, 1) for x in tok_s],
          "seconds_runs": [round(s, 4) for s in secs], "tok_s": round(statistics.median(tok_s), 1),
          "loss0": round(loss0, 6), "last_loss": round(last, 6), "wall_s": round(sum(secs), 3),
          "user_s": round(u1 - u0, 3), "sys_s": round(s1 - s0, 3), "maxrss_kb": maxrss_kb(),
          "torch": torch.__version__})
    return 0


def collate_sources(sents, idx):
    S = max(len(sents[i]) for i in idx)
    src = torch.zeros(S, len(idx), dtype=torch.long)
    for b, i in enumerate(idx):
        src[:len(sents[i]), b] = torch.tensor(sents[i], dtype=torch.long)
    return src, torch.tensor([len(sents[i]) for i in idx], dtype=torch.long)


def greedy_all(model, sents, batch, max_len):
    """Sentences sorted by length (ties in input order, as greedy_decode), `batch` at
    a time, through torch_ref's Seq2Seq.greedy; results in input order."""
    order = sorted(range(len(sents)), key=lambda i: len(sents[i]))
    hyps = [None] * len(sents)
    limit = (lambda n: max_len) if max_len > 0 else None
    # the Transformer decodes incrementally, with its keys and values cached
    greedy = getattr(model, "greedy_cached", model.greedy)
    for k in range(0, len(order), batch):
        idx = order[k:k + batch]
        src, src_len = collate_sources(sents, idx)
        for i, h in zip(idx, greedy(src, src_len, limit)):
            hyps[i] = h
    return hyps


def cmd_greedy(a):
    torch.set_num_threads(a.threads)
    t0 = time.perf_counter()
    model, _, _ = load_model(a.init)
    load_s = time.perf_counter() - t0
    model.eval()
    sents = load_sentences(a.dec)[:a.first or None]
    hyps = greedy_all(model, sents, a.batch, a.max_len)  # untimed first pass
    sps = []
    u0, s0 = cpu_times()
    for r in range(a.runs):
        t0 = time.perf_counter()
        hyps = greedy_all(model, sents, a.batch, a.max_len)
        sps.append(len(sents) / (time.perf_counter() - t0))
    u1, s1 = cpu_times()
    emit({"job": "greedy", "impl": "torch", "threads": torch.get_num_threads(), "batch": a.batch,
          "max_len": a.max_len, "sentences": len(sents), "load_s": round(load_s, 4),
          "sent_s_runs": [round(x, 2) for x in sps], "sent_s": round(statistics.median(sps), 2),
          "out_tokens": sum(len(h) for h in hyps), "out_hash": hyps_hash(hyps), "user_s": round(u1 - u0, 3),
          "sys_s": round(s1 - s0, 3), "maxrss_kb": maxrss_kb()})
    return 0


@torch.no_grad()
def beam_one(model, ids, K, limit, alpha):
    """Beam search of one sentence, as src/decode/beam.h describes it (nbest 1): each
    live hypothesis proposes its K best next tokens by logit; of the candidates the
    K - finished best by raw log-probability are kept; a candidate ending in <eos> or
    reaching the limit finishes with score raw / len^alpha (len counts <eos>); the
    search stops when nothing is live or no live hypothesis can beat the best finished
    one (bound raw / limit^alpha). Returns the best hypothesis's ids."""
    src = torch.tensor(ids, dtype=torch.long).unsqueeze(1)
    enc, dstate = model.encode(src, torch.tensor([len(ids)]))
    lstm = isinstance(dstate[0], tuple)
    live = [(0.0, [])]
    best, finished = None, 0  # best: (score, ids)
    y = torch.tensor([BOS], dtype=torch.long)
    bound = (lambda raw: raw / (limit ** alpha)) if alpha else (lambda raw: raw)
    while live and finished < K:
        n = len(live)
        rows = torch_ref.Encoded(enc.h.expand(-1, n, -1),
                           None if enc.keys is None else enc.keys.expand(-1, n, -1),
                           None if enc.values is None else enc.values.expand(-1, n, -1),
                           enc.mask.expand(-1, n), enc.src_len.expand(n))
        logits, dstate, _ = model.decode_step(y, dstate, rows)
        logp = F.log_softmax(logits.double(), dim=1)
        top = logits.topk(K, dim=1).indices                        # (n, K)
        cand = []
        for r in range(n):
            raw = live[r][0]
            lp = logp[r, top[r]].tolist()
            for j, tok in enumerate(top[r].tolist()):
                cand.append((raw + lp[j], r, j, tok))
        cand.sort(key=lambda c: (-c[0], c[1], c[2]))
        nxt, parents = [], []
        for raw, r, _, tok in cand[:K - finished]:
            toks = live[r][1]
            if tok == EOS or len(toks) + 1 >= limit:
                finished += 1
                out = toks if tok == EOS else toks + [tok]
                length = len(toks) + 1
                score = raw / (length ** alpha) if alpha else raw
                if best is None or score > best[0]:
                    best = (score, out)
            else:
                nxt.append((raw, toks + [tok]))
                parents.append(r)
        if not nxt or (best is not None and all(bound(x[0]) <= best[0] for x in nxt)):
            break
        sel = torch.tensor(parents, dtype=torch.long)
        state, feed, step = dstate
        state = (state[0].index_select(1, sel), state[1].index_select(1, sel)) if lstm else state.index_select(1, sel)
        dstate = (state, None if feed is None else feed.index_select(0, sel), step)
        live = nxt
        y = torch.tensor([t[-1] for _, t in live], dtype=torch.long)
    return best[1] if best else []


def cmd_beam(a):
    torch.set_num_threads(a.threads)
    model, _, _ = load_model(a.init)
    model.eval()
    sents = load_sentences(a.dec)[:a.first or None]
    limit = lambda n: a.max_len if a.max_len > 0 else 2 * n + 10  # noqa: E731
    hyps = [beam_one(model, s, a.beam, limit(len(s)), a.alpha) for s in sents[:2]]  # warm-up
    sps = []
    u0, s0 = cpu_times()
    for r in range(a.runs):
        t0 = time.perf_counter()
        hyps = [beam_one(model, s, a.beam, limit(len(s)), a.alpha) for s in sents]
        sps.append(len(sents) / (time.perf_counter() - t0))
    u1, s1 = cpu_times()
    emit({"job": "beam", "impl": "torch", "threads": torch.get_num_threads(), "beam": a.beam,
          "max_len": a.max_len, "sentences": len(sents), "sent_s_runs": [round(x, 2) for x in sps],
          "sent_s": round(statistics.median(sps), 2), "out_tokens": sum(len(h) for h in hyps),
          "out_hash": hyps_hash(hyps), "user_s": round(u1 - u0, 3), "sys_s": round(s1 - s0, 3),
          "maxrss_kb": maxrss_kb()})
    return 0


def cmd_one(a):
    torch.set_num_threads(a.threads)
    model, _, _ = load_model(a.init)
    model.eval()
    ids = [int(x) for x in a.ids.split()]
    hyp = greedy_all(model, [ids], 1, a.max_len)[0]
    print(" ".join(map(str, hyp)), flush=True)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="torch_bench.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    q = sub.add_parser("train")
    q.add_argument("batches")
    q.add_argument("init")
    q.add_argument("--warmup", type=int, default=2)
    q.add_argument("--seed", type=int, default=1)
    q.add_argument("--bf16", action="store_true", help="torch.autocast('cpu', dtype=torch.bfloat16) around the forward")
    q.set_defaults(fn=cmd_train)
    q = sub.add_parser("greedy")
    q.add_argument("init")
    q.add_argument("dec")
    q.add_argument("--batch", type=int, default=1)
    q.set_defaults(fn=cmd_greedy)
    q = sub.add_parser("beam")
    q.add_argument("init")
    q.add_argument("dec")
    q.add_argument("--beam", type=int, default=5)
    q.add_argument("--alpha", type=float, default=1.0)
    q.set_defaults(fn=cmd_beam)
    q = sub.add_parser("one")
    q.add_argument("init")
    q.add_argument("ids")
    q.set_defaults(fn=cmd_one)
    for name, q in sub.choices.items():
        q.add_argument("--threads", type=int, default=2)
        if name != "train":
            q.add_argument("--max-len", type=int, default=10)
            q.add_argument("--first", type=int, default=0, help="only the first N sentences")
        q.add_argument("--runs", type=int, default=3)
    a = p.parse_args(argv)
    try:
        return a.fn(a)
    except torch_ref.RefError as e:
        print(f"torch_bench.py: {e}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
