#!/usr/bin/env python3
"""The measurements of docs/constraints.md:

    scripts/measure-constraints.py MODEL TEST.tsv GLOSSARY.tsv OUTDIR

on the test split TEST.tsv (source<TAB>reference) with beam 5 (s2s's defaults):

1. Constraints drawn from the references: for each line, the words of its reference
   (tokens of `s2s tokenize --lang fr`, letters only, at least 4 of them, whose subword
   units are all in the model's target vocabulary: the prepared directory beside
   TEST.tsv has them) that the unconstrained output lacks (compared lowercased), in
   reference order: the first two (one when there is one; none: the line has no
   constraint). Reported: the share of
   outputs holding all their constraints (contiguously, as tokens), BLEU and chrF without
   and with them (every line, and the lines with constraints), and the decoding time of
   `s2s eval` without and with them.
2. The glossary on the lines whose source holds one of its terms (whole tokens, case
   ignored): the share of the terms found that the output holds, without and with
   `--glossary --glossary-ignore-case`, and BLEU on those lines and on those whose
   reference holds the target term.
3. Prefixes: every line whose reference has at least 4 tokens gets the first half of
   them (one more when the half ends in an elided word such as l'; detokenized) as
   "prefix" (when its units are all in the vocabulary); BLEU of the completion (the output's tokens after the
   prefix's) against the reference's second half, beside the same for the unconstrained
   output (its tokens after as many tokens as the prefix has).
BLEU and chrF are `s2s score` against the line's own reference (one reference a line).
"""
import json
import os
import subprocess
import sys

S2S = os.environ.get("S2S", "./s2s")


def run(args, stdin=None):
    return subprocess.run([S2S] + args, input=stdin, capture_output=True, text=True, check=True).stdout


def tokens(lines, lang):
    out = run(["tokenize", "--lang", lang], "\n".join(lines) + "\n").split("\n")
    return [l.split() for l in out[:len(lines)]]


def detok(toks, lang):
    out = run(["tokenize", "--lang", lang, "--detok"], "\n".join(" ".join(t) for t in toks) + "\n").split("\n")
    return out[:len(toks)]


def write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(l + "\n" for l in lines))


def score(out, hyps, refs, name):
    write(f"{out}/{name}.hyp", hyps)
    write(f"{out}/{name}.ref", refs)
    j = run(["score", f"{out}/{name}.hyp", f"{out}/{name}.ref", "--json"])
    d = [json.loads(l) for l in j.strip().split("\n")] if j.strip().startswith("{") else json.loads(j)
    if isinstance(d, dict):
        d = [d]
    bleu = next(x["score"] for x in d if x["name"] == "BLEU")
    chrf = next(x["score"] for x in d if x["name"].startswith("chrF"))
    return bleu, chrf


def evaluate(model, tsv, hyp, extra):
    j = json.loads(run(["eval", model, tsv, "--json", "-o", hyp] + extra))
    with open(hyp, encoding="utf-8") as f:
        return f.read().split("\n")[:-1], j["decode_seconds"]


def contains(toks, phrase):
    n = len(phrase)
    return any(toks[i:i + n] == phrase for i in range(len(toks) - n + 1))


def main():
    model, test, glossary, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    with open(test, encoding="utf-8") as f:
        pairs = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    src = [p[0] for p in pairs]
    ref = [p[1] for p in pairs]
    write(f"{out}/plain.tsv", [f"{s}\t{r}" for s, r in pairs])
    hyp0, t0 = evaluate(model, f"{out}/plain.tsv", f"{out}/plain.hyp", [])
    rtok, htok = tokens(ref, "fr"), tokens(hyp0, "fr")

    # 1. constraints from the references
    d = os.path.dirname(test)
    with open(f"{d}/vocab.tgt", encoding="utf-8") as f:
        vocab = {l.split("\t")[0].rstrip("\n") for l in f}
    cand = sorted({t for rt in rtok for t in rt})
    seg = run(["tokenize", "--lang", "fr", "--bpe", f"{d}/bpe.tgt"], "\n".join(cand) + "\n").split("\n")
    known = {w for w, units in zip(cand, seg) if all(u in vocab for u in units.split())}
    cons = []
    for rt, ht in zip(rtok, htok):
        have = {t.lower() for t in ht}
        words = [t for t in rt if t.isalpha() and len(t) >= 4 and t in known and t.lower() not in have]
        seen = []
        for w in words:
            if w not in seen:
                seen.append(w)
        cons.append(seen[:2])
    lines = [json.dumps({"text": s, "constraints": c}, ensure_ascii=False) if c else s for s, c in zip(src, cons)]
    write(f"{out}/cons.tsv", [f"{l}\t{r}" for l, r in zip(lines, ref)])
    hyp1, t1 = evaluate(model, f"{out}/cons.tsv", f"{out}/cons.hyp", ["--constraints"])
    h1tok = tokens(hyp1, "fr")
    withc = [i for i, c in enumerate(cons) if c]
    ok = sum(all(contains(h1tok[i], [w]) for w in cons[i]) for i in withc)
    print(f"1. constraints: {len(withc)} of {len(src)} lines have some "
          f"({sum(len(c) for c in cons)} words); outputs holding all of theirs: {ok}/{len(withc)} "
          f"({100 * ok / max(1, len(withc)):.1f} %)")
    for name, sel in (("every line", range(len(src))), ("lines with constraints", withc)):
        b0, c0 = score(out, [hyp0[i] for i in sel], [ref[i] for i in sel], "s0")
        b1, c1 = score(out, [hyp1[i] for i in sel], [ref[i] for i in sel], "s1")
        print(f"   {name}: BLEU {b0:.2f} -> {b1:.2f}, chrF {c0:.2f} -> {c1:.2f}")
    print(f"   decoding (s2s eval): {t0:.2f} s -> {t1:.2f} s")

    # 2. the glossary
    terms = []
    with open(glossary, encoding="utf-8") as f:
        for l in f:
            if l.strip() and not l.startswith("#"):
                a, b = l.rstrip("\n").split("\t")
                terms.append((a, b))
    stok = tokens([s.lower() for s in src], "en")
    ttok = tokens([b for a, b in terms], "fr")
    atok = tokens([a.lower() for a, b in terms], "en")
    found = []  # (line, term index)
    for i, st in enumerate(stok):
        for k, at in enumerate(atok):
            if contains(st, at):
                found.append((i, k))
    gl_lines = sorted({i for i, k in found})
    write(f"{out}/gloss.tsv", [f"{src[i]}\t{ref[i]}" for i in gl_lines])
    hg0, _ = evaluate(model, f"{out}/gloss.tsv", f"{out}/gloss0.hyp", [])
    hg1, _ = evaluate(model, f"{out}/gloss.tsv", f"{out}/gloss1.hyp", ["--glossary", glossary, "--glossary-ignore-case"])
    at = {i: j for j, i in enumerate(gl_lines)}
    g0tok, g1tok = tokens(hg0, "fr"), tokens(hg1, "fr")
    kept0 = sum(contains([t.lower() for t in g0tok[at[i]]], [t.lower() for t in ttok[k]]) for i, k in found)
    kept1 = sum(contains(g1tok[at[i]], ttok[k]) for i, k in found)
    used = sorted({k for i, k in found})
    print(f"2. glossary ({len(terms)} terms, {len(used)} found in the test sources): {len(found)} occurrences "
          f"on {len(gl_lines)} lines; outputs holding the target term: without {kept0}/{len(found)}, "
          f"with {kept1}/{len(found)} ({100 * kept1 / max(1, len(found)):.1f} %)")
    b0, c0 = score(out, hg0, [ref[i] for i in gl_lines], "g0")
    b1, c1 = score(out, hg1, [ref[i] for i in gl_lines], "g1")
    print(f"   those lines: BLEU {b0:.2f} -> {b1:.2f}, chrF {c0:.2f} -> {c1:.2f}")
    agree = sorted({i for i, k in found if contains(rtok[i], ttok[k])})
    if agree:
        b0, c0 = score(out, [hg0[at[i]] for i in agree], [ref[i] for i in agree], "g0a")
        b1, c1 = score(out, [hg1[at[i]] for i in agree], [ref[i] for i in agree], "g1a")
        print(f"   the {len(agree)} lines whose reference uses the target term: BLEU {b0:.2f} -> {b1:.2f}, "
              f"chrF {c0:.2f} -> {c1:.2f}")

    # 3. prefixes
    def cut(rt):  # half the tokens, not ending in an elided word (l', qu'): one more then
        h = len(rt) // 2
        return h + 1 if rt[h - 1].endswith("'") else h
    sel = [i for i, rt in enumerate(rtok) if len(rt) >= 4 and all(t in known for t in rt[:cut(rt)])]
    half = {i: cut(rtok[i]) for i in sel}
    prefixes = detok([rtok[i][:half[i]] for i in sel], "fr")
    lines = [json.dumps({"text": src[i], "prefix": p}, ensure_ascii=False) for i, p in zip(sel, prefixes)]
    write(f"{out}/prefix.tsv", [f"{l}\t{ref[i]}" for l, i in zip(lines, sel)])
    hp, tp = evaluate(model, f"{out}/prefix.tsv", f"{out}/prefix.hyp", ["--constraints"])
    ptok = tokens(hp, "fr")
    starts = sum(ptok[j][:half[i]] == rtok[i][:half[i]] for j, i in enumerate(sel))
    comp = detok([ptok[j][half[i]:] for j, i in enumerate(sel)], "fr")
    base = detok([htok[i][half[i]:] for i in sel], "fr")
    second = detok([rtok[i][half[i]:] for i in sel], "fr")
    b1, c1 = score(out, comp, second, "p1")
    b0, c0 = score(out, base, second, "p0")
    print(f"3. prefixes: {len(sel)} lines; outputs starting with their prefix (as tokens): {starts}/{len(sel)}")
    print(f"   the second half: BLEU {b0:.2f} (unconstrained output) -> {b1:.2f} (completion of the prefix), "
          f"chrF {c0:.2f} -> {c1:.2f}")


if __name__ == "__main__":
    main()
