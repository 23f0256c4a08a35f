#!/usr/bin/python3
"""Splits a perf profile of a benchmark job (bench/profile.sh, DWARF call graphs) into
the phases of the model: reads `perf script` output on stdin, prints a Markdown table
of the share of samples per phase and, within it, the share spent inside OpenBLAS.
Standard library only."""

import re
import sys

# (function on the stack, phase); the first entry whose function is on a sample's
# stack names its phase, so the more specific ones come first.
PHASES = [
    ("encoder_forward", "encoder, forward (RNN layers, keys, bridge; Transformer: its layers)"),
    ("encoder_backward", "encoder, backward"),
    ("model_encode", "encoder, forward (RNN layers, keys, bridge)"),
    ("dec_step", "decoder steps, forward (attention, GRU cell; Luong: attentional state)"),
    ("dec_rnn_backward", "decoder steps, backward (GRU cell)"),
    ("attend_step_backward", "decoder steps, backward (attention)"),
    ("nn_linear_forward@output_loss", "output layer: vocabulary projection, forward"),
    ("nn_xent_forward", "output layer: softmax + label-smoothed loss"),
    ("nn_xent_backward_inplace", "output layer: gradient of the loss"),
    ("nn_linear_backward@output_loss", "output layer: vocabulary projection, backward"),
    ("output_forward", "deep output, forward"),
    ("output_backward", "deep output, backward"),
    ("decoder_forward", "Transformer decoder, forward"),
    ("tf_backward", "Transformer decoder and encoder, backward"),
    ("nn_embedding_backward", "embeddings, backward"),
    ("optim_adam_step", "Adam update"),
    ("optim_clip_grad_norm", "gradient norm and clipping"),
    ("model_forward_backward", "other model work (elementwise, memsets, embeddings, dropout)"),
    ("model_forward", "other forward work (embeddings, dropout)"),
    ("greedy_decode", "greedy bookkeeping (argmax, batch set-up)"),
]
FRAME = re.compile(r"^\s*[0-9a-f]+\s+(\S+?)(\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def samples(lines):
    stack = []
    for line in lines:
        if not line.strip():
            if stack:
                yield stack
            stack = []
            continue
        m = FRAME.match(line)
        if m:
            stack.append((m.group(1), m.group(3)))
    if stack:
        yield stack


def phase_of(stack):
    names = [f for f, _ in stack]  # leaf first
    for key, phase in PHASES:
        if "@" in key:
            fn, parent = key.split("@")
            for i, f in enumerate(names[:-1]):
                if f == fn and names[i + 1] == parent:
                    return phase
            continue
        if key in names:
            return phase
    return "other (outside the model)"


def main():
    count, blas, total = {}, {}, 0
    for st in samples(sys.stdin):
        p = phase_of(st)
        count[p] = count.get(p, 0) + 1
        if "openblas" in st[0][1]:
            blas[p] = blas.get(p, 0) + 1
        total += 1
    if not total:
        print("no samples")
        return 1
    print(f"| phase | share of samples | of which in OpenBLAS |")
    print("| --- | ---: | ---: |")
    for p, n in sorted(count.items(), key=lambda x: -x[1]):
        print(f"| {p} | {100 * n / total:.1f} % | {100 * blas.get(p, 0) / total:.1f} % |")
    print(f"| all ({total} samples) | 100 % | {100 * sum(blas.values()) / total:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
