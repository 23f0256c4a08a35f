#!/usr/bin/python3
"""Turns bench/out/results.jsonl (written by bench/run.sh) into the table of
bench/results.md, printed on stdout as well. Standard library only."""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

TRAIN_ROWS = (
    ("train-gru", "training, reference: bi-GRU 256, Bahdanau 256, GRU decoder 256, deep output 256", 3.0),
    ("train-lstm", "training, the same with LSTM cells", 2.0),
    ("train-luong", "training, GRU with `--attention luong-general --input-feed`", 2.0),
    ("train-transformer", "training, Transformer: d 256, 3 + 3 layers, 4 heads, ff 1024, post-norm", 4.0),
)
# the training FLOP rate targets (fraction of the sgemm peak) of the rows that have one
FLOP_TARGETS = {"train-gru": 0.75, "train-transformer": 0.8}
SCALING_TARGET = 1.8  # s2s on all threads against s2s on 1
# peak memory against PyTorch's: a third, except the Transformer's training (a half)
MEM_TARGETS = {"train-transformer": 0.5}


def load(path):
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                # run.sh's row and impl come first; a tool's own "impl" (torch_bench.py
                # says "torch" for every setting) must not replace them
                r = json.loads(line, object_pairs_hook=lambda kv: {k: v for k, v in reversed(kv)})
                rows[(r["row"], r["impl"])] = r
    return rows


def machine():
    name = platform.processor() or "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                name = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return name, os.cpu_count()


def pkg_version(pkg):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
        return out.stdout.strip() or "?"
    except OSError:
        return "?"


def fmt(x, digits=0):
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def ratio_cell(x):
    return "n/a" if x is None else f"{x:.2f}×"


def met(value, target, higher=True):
    if value is None:
        return "n/a"
    ok = value >= target if higher else value <= target
    return "yes" if ok else "**no**"


def grow_keys(R, prefix):
    """The X of every row named PREFIX-X in the results, ascending."""
    xs = set()
    for row, _ in R:
        if row.startswith(prefix) and row[len(prefix):].isdigit():
            xs.add(int(row[len(prefix):]))
    return sorted(xs)


def growth_section(R, get, seconds):
    """The tables of BENCH_ROWS=growth (rows grow-*), or [] when it did not run."""
    lens, vocabs, batches = grow_keys(R, "grow-synth-"), grow_keys(R, "grow-vocab-"), grow_keys(R, "grow-batch-")
    if not (lens or vocabs or batches):
        return []

    def pair(row, key):
        s, t = get(row, "s2s"), get(row, "torch")
        return (s[key] if s else None), (t[key] if t else None)

    def ratio(s, t):
        return f"{s / t:.2f}×" if s and t else "n/a"

    def ms(x):
        return f"{1000 / x:,.2f}" if x else "n/a"

    def same(row):
        s, t = get(row, "s2s"), get(row, "torch")
        if not (s and t):
            return "n/a"
        return "yes" if s["out_hash"] == t["out_hash"] else "**no**"

    L = ["### How cost grows", ""]
    synth = next((get(f"grow-synth-{x}", "s2s") for x in lens if get(f"grow-synth-{x}", "s2s")), None)
    L.append(f"`BENCH_ROWS=growth` ({seconds} s in this run; bench/README.md, \"How cost grows\"). Synthetic "
             "data (`s2s-bench synth`): random word ids of the prepared vocabularies, every source and every "
             "target (`<eos>` included) of a batch the same length"
             + (f", batches of {synth['batch']} rows" if synth else "") +
             "; one warm-up step, then runs of about the same number of target tokens; medians. MFLOP per "
             "target token: bench/flops.c's count for those lengths (×3 for training); GFLOP/s = that × tokens/s.")
    L.append("")
    if lens:
        L.append("Training against length (source length = target length):")
        L.append("")
        L.append("| length | reference s2s tok/s | PyTorch | s2s vs PyTorch | MFLOP/token | s2s GFLOP/s | "
                 "Transformer s2s tok/s | PyTorch | s2s vs PyTorch | MFLOP/token | s2s GFLOP/s |")
        L.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for x in lens:
            cells = [str(x)]
            for m in ("gru", "tf"):
                row = f"grow-train-{m}-{x}"
                s, t = pair(row, "tok_s")
                sj = get(row, "s2s")
                cells += [fmt(s), fmt(t), ratio(s, t), f"{sj['flops_per_tok'] / 1e6:.1f}" if sj else "n/a",
                          f"{sj['gflops']:.1f}" if sj else "n/a"]
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
        L.append("Greedy decoding at batch 1 against length (source length = output steps = `--max-len`), "
                 "ms per sentence:")
        L.append("")
        L.append("| length | reference s2s | PyTorch | s2s vs PyTorch | same output | Transformer s2s | "
                 "PyTorch (cached) | s2s vs PyTorch | same output |")
        L.append("| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |")
        for x in lens:
            cells = [str(x)]
            for m in ("gru", "tf"):
                row = f"grow-greedy-{m}-{x}"
                s, t = pair(row, "sent_s")
                cells += [ms(s), ms(t), ratio(s, t), same(row)]
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
    if vocabs:
        L.append("Training (reference model) against the target vocabulary, length 10:")
        L.append("")
        L.append("| target vocabulary | parameters | s2s tok/s | PyTorch | s2s vs PyTorch | MFLOP/token | "
                 "s2s GFLOP/s | PyTorch GFLOP/s |")
        L.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for x in vocabs:
            row = f"grow-vocab-{x}"
            s, t = pair(row, "tok_s")
            sj = get(row, "s2s")
            fpt = sj["flops_per_tok"] if sj else None
            L.append(f"| {x:,} | {fmt(sj['params']) if sj else 'n/a'} | {fmt(s)} | {fmt(t)} | {ratio(s, t)} | "
                     f"{fmt(fpt / 1e6 if fpt else None, 1)} | {fmt(sj['gflops'] if sj else None, 1)} | "
                     f"{fmt(fpt * t / 1e9 if fpt and t else None, 1)} |")
        L.append("")
    if batches:
        g = get(f"grow-batch-{batches[0]}", "s2s")
        L.append("Greedy decoding (reference model) against the batch size"
                 + (f": the first {g['sentences']} sentences of the decoding set, {g['max_len']} steps each"
                    if g else "") + ":")
        L.append("")
        L.append("| batch | s2s sentences/s | PyTorch | s2s vs PyTorch | same output |")
        L.append("| ---: | ---: | ---: | ---: | --- |")
        for x in batches:
            row = f"grow-batch-{x}"
            s, t = pair(row, "sent_s")
            L.append(f"| {x} | {fmt(s, 1)} | {fmt(t, 1)} | {ratio(s, t)} | {same(row)} |")
        L.append("")
    return L


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("output")
    ap.add_argument("--commands")
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--data", default="")
    ap.add_argument("--notes")
    ap.add_argument("--growth-seconds", type=int, default=0)
    a = ap.parse_args()
    R = load(a.results)

    def get(row, impl):
        r = R.get((row, impl))
        return None if r is None or "na" in r else r

    def why(row, impl):
        r = R.get((row, impl))
        if r is None:
            return "not run"
        return r.get("na", "")

    name, ncpu = machine()
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    L = []
    L.append("# `make bench` results")
    L.append("")
    L.append(f"{now}; {name}, {ncpu} CPUs; {a.threads} threads for OpenBLAS and for torch; OpenBLAS "
             f"{pkg_version('libopenblas0-pthread')}, python3-torch {pkg_version('python3-torch')}; "
             f"{a.seconds} s in all. Load average when the report was written: "
             f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}.")
    d = get("data", "s2s")
    if d:
        L.append(f"Data: `{a.data}` (`s2s prepare` defaults: min-freq 2; vocabularies {d['src_vocab']} / "
                 f"{d['tgt_vocab']}); training uses the first {d['batches']} batches of 64 of the seed-1 epoch "
                 f"plan ({d['tokens']:,} target tokens), decoding the first distinct sources of the valid split.")
    L.append("")

    # ---------------------------------------------------------------- main table
    L.append("| benchmark | unit | s2s | PyTorch | s2s vs PyTorch | target | met |")
    L.append("| --- | --- | ---: | ---: | ---: | --- | --- |")
    checks = []
    for row, label, target in TRAIN_ROWS:
        s, t = get(row, "s2s"), get(row, "torch")
        # PyTorch at its best in fp32: its faster thread count where both were run
        t1 = get(row, "torch1")
        t_at = ""
        if t and t1 and t1["tok_s"] > t["tok_s"]:
            t, t_at = t1, " (1 thread)"
        elif t and t1:
            t_at = f" ({a.threads} threads)"
        rt = s["tok_s"] / t["tok_s"] if s and t else None
        tcell = fmt(t["tok_s"]) + t_at if t else f"n/a ({why(row, 'torch')})"
        L.append(f"| {label} | target tokens/s | {fmt(s['tok_s']) if s else 'n/a'} | {tcell} | "
                 f"{ratio_cell(rt)} | ≥ {target:g}× | {met(rt, target)} |")
        if s and t:
            same = abs(s["loss0"] - t["loss0"]) <= 1e-4 * max(1.0, abs(t["loss0"]))
            checks.append(f"{row}: loss of batch 0 before training (dropout off) s2s {s['loss0']:.6f}, "
                          f"PyTorch {t['loss0']:.6f}: {'the same model' if same else 'DIFFERENT'}")
    # PyTorch at its best: 1 or 2 threads, fp32 or bf16 autocast (the rows that have them)
    best_rows = []
    for row, label, target in TRAIN_ROWS:
        s2, s1 = get(row, "s2s"), get(row, "s2s1")
        cands = [(get(row, i), n) for i, n in (("torch", f"fp32, {a.threads} threads"), ("torch1", "fp32, 1 thread"),
                                                ("torchbf16", "bf16 autocast, 1 thread"),
                                                ("torchbf16x2", f"bf16 autocast, {a.threads} threads"))]
        cands = [(x, n) for x, n in cands if x]
        if not s2 or not s1 or len(cands) < 2:
            continue
        bx, bn = max(cands, key=lambda c: c[0]["tok_s"])
        f32 = [(x, n) for x, n in cands if x.get("autocast") is None]
        fx, fn = max(f32, key=lambda c: c[0]["tok_s"])
        sc = s2['tok_s'] / s1['tok_s']
        best_rows.append(f"| {row} | {fmt(s1['tok_s'])} | {fmt(s2['tok_s'])} | {sc:.2f}× ({met(sc, SCALING_TARGET)}) | "
                         + " | ".join(fmt(x["tok_s"]) if x else "n/a" for x in (get(row, "torch1"), get(row, "torch"),
                                                                               get(row, "torchbf16"), get(row, "torchbf16x2")))
                         + f" | {fn} | {s2['tok_s'] / fx['tok_s']:.2f}× | {bn} | {s2['tok_s'] / bx['tok_s']:.2f}× |")
    # reduced precision: s2s train --precision bf16 against s2s in fp32 and PyTorch's fastest
    bf16_rows = []
    for row, label, target in TRAIN_ROWS:
        s2, sb = get(row, "s2s"), get(row, "s2sbf16")
        if not s2 or not sb:
            continue
        cands = [x for x in (get(row, i) for i in ("torch", "torch1", "torchbf16", "torchbf16x2")) if x]
        bx = max(cands, key=lambda x: x["tok_s"]) if cands else None
        f32 = [x for x in (get(row, i) for i in ("torch", "torch1")) if x]
        fx = max(f32, key=lambda x: x["tok_s"]) if f32 else None
        goal = 1.5 if row == "train-transformer" else None
        r = sb["tok_s"] / s2["tok_s"]
        bf16_rows.append(f"| {row} | {fmt(s2['tok_s'])} | {fmt(sb['tok_s'])} | {r:.2f}× | "
                         + (f"≥ {goal:g}× | {met(r, goal)} | " if goal else "(info) | | ")
                         + f"{fmt(sb['gflops'], 1)} | {sb['last_loss']:.4f} vs {s2['last_loss']:.4f} | "
                         + (f"{sb['tok_s'] / fx['tok_s']:.2f}× | " if fx else "n/a | ")
                         + (f"{sb['tok_s'] / bx['tok_s']:.2f}× |" if bx else "n/a |"))
    # decoding: s2s decodes in int8 by default (every decoder-step product; the targets
    # apply to what users get), and in f32 on request, PyTorch's computation (the same
    # outputs, checked below)
    def best_torch(row):
        """PyTorch's faster setting of the row: 2 threads ("torch") or 1 ("torch1"), with
        the thread count added to its record as "at" for the table."""
        t, t1 = get(row, "torch"), get(row, "torch1")
        if t and t1:
            b = dict(t1 if t1["sent_s"] > t["sent_s"] else t)
            b["at"] = " (1 thread)" if t1["sent_s"] > t["sent_s"] else f" ({a.threads} threads)"
            return b
        return t
    g1s, g1t = get("greedy-b1", "s2s"), best_torch("greedy-b1")
    def sps_ms(x):
        return "n/a" if not x else f"{x['sent_s']:,.1f} ({1000 / x['sent_s']:.2f}){x.get('at', '')}"
    def vs(x, t):
        return x["sent_s"] / t["sent_s"] if x and t else None
    def outputs(x):
        if not x or not g1s:
            return "outputs not compared"
        return "the same outputs as f32" if x["out_hash"] == g1s["out_hash"] else "outputs differ from f32's"
    def decode_row(label, x, t, target=None):
        r = vs(x, t)
        goal = f"≥ {target:g}× | {met(r, target)}" if target else "(info) |"
        L.append(f"| {label} | sentences/s (ms per sentence) | {sps_ms(x)} | {sps_ms(t)} | {ratio_cell(r)} | "
                 f"{goal} |")
    g8 = get("greedy-b1-int8", "s2s")
    decode_row(f"greedy, batch 1, model loaded, int8 (the default; {outputs(g8)}; PyTorch in f32)", g8, g1t, 10)
    decode_row("greedy, batch 1, model loaded, `--precision f32`", g1s, g1t)
    gb = get("greedy-b1-bf16", "s2s")
    if gb:
        decode_row(f"greedy, batch 1, `--precision bf16` ({outputs(gb)})", gb, g1t)
    p1s, p1t = get("process-1", "s2s"), get("process-1", "torch")
    r = p1t["wall_s"] / p1s["wall_s"] if p1s and p1t else None
    L.append(f"| greedy, one sentence as a whole process (start, model load and int8 packing, decode) | ms per process | "
             f"{fmt(p1s['wall_s'] * 1000, 1) if p1s else 'n/a'} | {fmt(p1t['wall_s'] * 1000, 1) if p1t else 'n/a'} | "
             f"{ratio_cell(r)} | ≤ 30 ms | {met(p1s['wall_s'] * 1000 if p1s else None, 30, higher=False)} |")
    tgs, tgt = get("tf-greedy-b1", "s2s"), best_torch("tf-greedy-b1")
    decode_row("Transformer greedy, batch 1, model loaded, int8 (PyTorch: f32, incremental with a cache)",
               get("tf-greedy-b1-int8", "s2s"), tgt, 5)
    decode_row("Transformer greedy, batch 1, model loaded, `--precision f32`", tgs, tgt)
    g64s, g64t, g648 = get("greedy-b64", "s2s"), best_torch("greedy-b64"), get("greedy-b64-int8", "s2s")
    for x, what in ((g648, "int8"), (g64s, "`--precision f32`")):
        r = vs(x, g64t)
        L.append(f"| greedy, batch 64, {what} | sentences/s | {fmt(x['sent_s'], 1) if x else 'n/a'} | "
                 f"{fmt(g64t['sent_s'], 1) + g64t.get('at', '') if g64t else 'n/a'} | {ratio_cell(r)} | | |")
    bt = best_torch("beam5-b1")
    n1 = g1s["sentences"] if g1s else None
    for prec, target in (("int8", 8), ("f32", None)):
        bs, bb = get(f"beam5-b1-{prec}", "s2s"), get(f"beam5-b1-{prec}-base", "s2s")
        beam_s2s = n1 / max(bs["wall_s"] - bb["wall_s"], 1e-9) if bs and bb and n1 else None
        r = beam_s2s / bt["sent_s"] if beam_s2s and bt else None
        label = "int8 (the default)" if prec == "int8" else "`--precision f32`"
        L.append(f"| beam 5, batch 1, {label} | sentences/s | "
                 f"{fmt(beam_s2s, 1) if beam_s2s else 'n/a (' + why(f'beam5-b1-{prec}', 's2s') + ')'} | "
                 f"{fmt(bt['sent_s'], 1) + bt.get('at', '') if bt else 'n/a (' + why('beam5-b1', 'torch') + ')'} | {ratio_cell(r)} | "
                 + (f"≥ {target}× | {met(r, target)} |" if target else "(info) | |"))
    L.append("")
    L.append("\"s2s vs PyTorch\" is how many times faster s2s is (throughput ratio; for the whole process, "
             "PyTorch's time over s2s's). Every figure is the median of the runs listed in the raw results.")
    L.append("")

    # ---------------------------------------------------------------- memory
    L.append("### Peak resident memory")
    L.append("")
    L.append("Peak RSS of the process that ran each benchmark (`getrusage`, `wait4` for whole processes); "
             "PyTorch's includes the Python interpreter and torch's libraries.")
    L.append("")
    L.append("| benchmark | s2s MiB | PyTorch MiB | s2s / PyTorch | target | met |")
    L.append("| --- | ---: | ---: | ---: | --- | --- |")
    # training: the target applies to one pass over the longest batches of an epoch
    # (where a run's peak is set); the first batches' peak is shown for comparison
    mem_rows = []
    for row, label, _ in TRAIN_ROWS:
        name = label.split(':')[0]
        lg = get(row + "-longest", "s2s")
        nlong = f"the {lg['batches']} longest batches of an epoch" if lg else "the longest batches of an epoch"
        mem_rows.append((row + "-longest", "s2s", f"{name}, {nlong}", MEM_TARGETS.get(row, 1 / 3)))
        if get(row + "-longest", "s2sbf16"):
            mem_rows.append((row + "-longest", "s2sbf16", f"{name}, {nlong}, s2s in bf16 (PyTorch in fp32)",
                             MEM_TARGETS.get(row, 1 / 3)))
        mem_rows.append((row, "s2s", f"{name}, the timed batches", None))
    mem_rows = [(row, row, impl, label, target) for row, impl, label, target in mem_rows]
    mem_rows += [(row, trow, "s2s", label, 1 / 3) for row, trow, label in (
        ("greedy-b1-int8", "greedy-b1", "greedy, batch 1, int8"), ("greedy-b1", "greedy-b1", "greedy, batch 1, f32"),
        ("greedy-b64-int8", "greedy-b64", "greedy, batch 64, int8"), ("greedy-b64", "greedy-b64", "greedy, batch 64, f32"),
        ("tf-greedy-b1-int8", "tf-greedy-b1", "Transformer greedy, batch 1, int8"),
        ("process-1", "process-1", "one sentence, whole process"),
        ("beam5-b1-int8", "beam5-b1", "beam 5, batch 1, int8"))]
    for row, trow, impl, label, target in mem_rows:
        s, t = get(row, impl), get(trow, "torch")
        if s is None and t is None and row.endswith("-longest"):
            continue
        sm = s["maxrss_kb"] / 1024 if s else None
        tm = t["maxrss_kb"] / 1024 if t else None
        r = sm / tm if sm and tm else None
        goal = f"≤ {target:.2f}" if target else "(info)"
        done = met(r, target, higher=False) if target else ""
        L.append(f"| {label} | {fmt(sm, 0)} | {fmt(tm, 0)} | {'n/a' if r is None else f'{r:.2f}'} | "
                 f"{goal} | {done} |")
    L.append("")

    # ---------------------------------------------------------------- efficiency
    sg = get("sgemm", "openblas")
    if not any(get(row, "s2s") for row, _, _ in TRAIN_ROWS):
        sg = None
    L.append("### Training FLOP rate against sgemm")
    L.append("")
    if sg:
        peak = sg["peak_gflops"]
        L.append(f"OpenBLAS `cblas_sgemm` peak in this run: **{peak:.1f} GFLOP/s** ({a.threads} threads, best "
                 "square size, median of the runs). Model FLOPs per target token are counted analytically "
                 "(bench/flops.h; formula in bench/README.md): products only, ×3 for forward + backward.")
        L.append("")
        L.append("| configuration | MFLOP per target token | s2s GFLOP/s | fraction of sgemm peak | "
                 "PyTorch GFLOP/s (fp32 at its best) | target | met |")
        L.append("| --- | ---: | ---: | ---: | ---: | --- | --- |")
        for row, label, _ in TRAIN_ROWS:
            s = get(row, "s2s")
            if not s:
                continue
            # PyTorch at its best in fp32: its faster thread count where both were run
            t = max((x for x in (get(row, "torch"), get(row, "torch1")) if x), key=lambda x: x["tok_s"],
                    default=None)
            frac = s["gflops"] / peak
            tg = s["flops_per_tok"] * t["tok_s"] / 1e9 if t else None
            L.append(f"| {label.split(',', 1)[1].strip()} | {s['flops_per_tok'] / 1e6:.1f} | {s['gflops']:.1f} | "
                     f"{100 * frac:.0f} % | {fmt(tg, 1)} | "
                     f"{f'≥ {100 * FLOP_TARGETS[row]:.0f} %' if row in FLOP_TARGETS else '(info)'} | "
                     f"{met(frac, FLOP_TARGETS[row]) if row in FLOP_TARGETS else ''} |")
        L.append("")
        L.append("sgemm at the sizes and shapes of a training step (M×N×K, row-major, no transposes):")
        L.append("")
        L.append("| M×N×K | GFLOP/s |")
        L.append("| --- | ---: |")
        for x in sg["results"]:
            L.append(f"| {x['m']}×{x['n']}×{x['k']} | {x['gflops']:.1f} |")
        L.append("")
    else:
        L.append("No training rows in this run.")
        L.append("")

    # ---------------------------------------------------------------- CPU time
    L.append("### CPU time of the timed training runs")
    L.append("")
    L.append("User and system CPU seconds over the timed steps against their wall time; with "
             f"{a.threads} threads the most is {a.threads}.0 CPU s per wall s.")
    L.append("")
    L.append("| configuration | implementation | wall s | user s | sys s | CPU / wall |")
    L.append("| --- | --- | ---: | ---: | ---: | ---: |")
    for row, label, _ in TRAIN_ROWS:
        for impl in ("s2s", "torch"):
            x = get(row, impl)
            if x:
                L.append(f"| {row} | {impl} | {x['wall_s']:.2f} | {x['user_s']:.2f} | {x['sys_s']:.2f} | "
                         f"{(x['user_s'] + x['sys_s']) / x['wall_s']:.2f} |")
    L.append("")


    # ---------------------------------------------------------------- PyTorch at its best
    if best_rows:
        L.append("### Training against PyTorch at its best")
        L.append("")
        L.append("Target tokens/s of the same batches; s2s on 1 and on all threads, PyTorch (Debian's build) on 1 and "
                 "all threads in fp32 and with `torch.autocast(\"cpu\", dtype=torch.bfloat16)` around the forward "
                 "(this CPU has bf16 instructions); the ratios are s2s on all threads against PyTorch's fastest "
                 f"fp32 setting and against its fastest setting of all. Scaling target: s2s on all threads "
                 f"≥ {SCALING_TARGET:g}× s2s on 1 (met or not in brackets).")
        L.append("")
        L.append("| row | s2s 1 thread | s2s all | s2s scaling | PyTorch 1 | PyTorch all | PyTorch bf16 1 | "
                 "PyTorch bf16 all | fastest fp32 | s2s vs it | fastest | s2s vs it |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: |")
        L.extend(best_rows)
        L.append("")

    if bf16_rows:
        L.append("### Training in bf16")
        L.append("")
        L.append("`s2s train --precision bf16` (the products' inputs rounded to bf16, sums in fp32, through oneDNN) "
                 "against fp32, both on all threads, target tokens/s of the same batches; the loss of the last "
                 "batch after the same steps in each; the last two columns against PyTorch's fastest fp32 setting "
                 "(1 or all threads) and its fastest setting of all (fp32 or bf16 autocast). `s2s train` trains in "
                 "bf16 by default on a CPU with bf16 instructions.")
        L.append("")
        L.append("| row | s2s fp32 | s2s bf16 | bf16 / fp32 | target | met | bf16 GFLOP/s | last loss bf16 vs fp32 | "
                 "bf16 vs PyTorch's fastest fp32 | bf16 vs PyTorch's fastest |")
        L.append("| --- | ---: | ---: | ---: | --- | --- | ---: | --- | ---: | ---: |")
        L.extend(bf16_rows)
        L.append("")

    # ---------------------------------------------------------------- products on the pool
    own_rows = []
    for row, label, target in TRAIN_ROWS:
        for prec, pool_impl, own_impl in (("fp32", "s2s", "s2sown"), ("bf16", "s2sbf16", "s2sbf16own")):
            p, o = get(row, pool_impl), get(row, own_impl)
            if p and o:
                own_rows.append(f"| {row} | {prec} | {fmt(o['tok_s'])} | {fmt(p['tok_s'])} | "
                                f"{p['tok_s'] / o['tok_s']:.2f}× | "
                                f"{(o['user_s'] + o['sys_s']) / o['wall_s']:.2f} | "
                                f"{(p['user_s'] + p['sys_s']) / p['wall_s']:.2f} | "
                                f"{o['last_loss']:.6f} vs {p['last_loss']:.6f} |")
    if own_rows:
        L.append("### Products on s2s's pool")
        L.append("")
        L.append("`s2s train` on more than one thread splits every product over its own pool of threads (one "
                 "single-threaded BLAS or oneDNN call per range of rows or columns) and lets the pool poll between "
                 "jobs; `--products own` (s2s-bench) runs the products on OpenBLAS's or oneDNN's own threads "
                 "instead, as before. Target tokens/s of the same batches, CPU seconds per wall second, and the "
                 "loss of the last batch.")
        L.append("")
        L.append("| row | precision | own threads | pool | pool / own | CPU/wall own | CPU/wall pool | last loss own vs "
                 "pool |")
        L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
        L.extend(own_rows)
        L.append("")

    # ---------------------------------------------------------------- how cost grows
    growth = growth_section(R, get, a.growth_seconds)
    if growth:
        L.extend(growth)

    # ---------------------------------------------------------------- checks
    for impl_row in ("greedy-b1", "greedy-b64", "tf-greedy-b1"):
        s, t = get(impl_row, "s2s"), get(impl_row, "torch")
        if s and t:
            checks.append(f"{impl_row}: {s['sentences']} sentences, output tokens s2s {s['out_tokens']}, PyTorch "
                          f"{t['out_tokens']}; outputs {'identical' if s['out_hash'] == t['out_hash'] else 'DIFFERENT'} "
                          f"(hash {s['out_hash']} / {t['out_hash']})")
    if bt:
        checks.append(f"beam5-b1: PyTorch output tokens {bt['out_tokens']} over {bt['sentences']} sentences")
    if checks:
        L.append("### Same work on both sides")
        L.append("")
        for c in checks:
            L.append(f"- {c}")
        L.append("")

    if a.commands and os.path.exists(a.commands):
        L.append("### Commands")
        L.append("")
        L.append("```sh")
        with open(a.commands, encoding="utf-8") as f:
            L.extend(line.rstrip() for line in f if line.strip())
        L.append("```")
        L.append("")
    L.append("Raw results: `bench/out/results.jsonl` (not committed).")
    L.append("")
    table = "\n".join(L)
    if a.notes and os.path.exists(a.notes):
        with open(a.notes, encoding="utf-8") as f:
            table += "\n" + f.read()
    tmp = a.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(table)
    os.replace(tmp, a.output)
    shown = L[:L.index("### Commands")] if "### Commands" in L else L
    sys.stdout.write("\n".join(shown) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
