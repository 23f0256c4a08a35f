"""The Python module s2s against the command line, run with Debian's python3 by
tests/cli/test_library.c on an installed copy (PYTHONPATH: its dist-packages,
S2S_LIBRARY: its libs2s.so.0, S2S: the binary under test). From the repository root:

    PYTHONPATH=python S2S_LIBRARY=build/release/lib/libs2s.so.0 /usr/bin/python3 tests/python/test_s2s.py

Each comparison gives the module and `s2s` the same inputs and expects the same text:
translations (best and n-best, at 1 and 2 threads, ensembles, options given at a call),
scores, tokens, the model's description; errors raise s2s.Error with the command's
message; two models and several threads in one process; README's example as it stands.
"""

import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import unittest

import s2s

RNN = "tests/recorded/rnn.s2s"
TF = "tests/recorded/tf.s2s"
S2S = os.environ.get("S2S", "./s2s")
if "/" not in S2S:
    S2S = "./" + S2S


def sample_sources(n=24):
    with open("data/sample.tsv", encoding="utf-8") as f:
        lines = [line.split("\t")[0] for line in f][:n]
    return lines + ["I have a cat. Where is the station?", "Tom is here! He is late.", "", " \t "]


TEXTS = sample_sources()


# The environment of the command: without the sanitizer runtime that the test under
# `make asan` preloads into python for the library (the command links its own).
CLI_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def run(*args, stdin=None, ok=True):
    p = subprocess.run([S2S, *args], input=stdin, capture_output=True, text=True, check=False, env=CLI_ENV)
    if ok and p.returncode != 0:
        raise AssertionError(f"s2s {' '.join(args)}: status {p.returncode}: {p.stderr}")
    return p


def cli_translate(model, *options, texts=TEXTS):
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt") as f:
        f.write("".join(t + "\n" for t in texts))
        f.flush()
        models = model if isinstance(model, list) else [model]
        return run("translate", *models, "-i", f.name, *options).stdout


def nbest_text(translations):
    return "".join(
        f"{i} ||| {h.text} ||| {h.score:.6f}\n" for i, t in enumerate(translations) for h in t.hypotheses
    )


def cli_message(*args):
    p = run(*args, ok=False)
    assert p.returncode != 0 and p.stderr.startswith("s2s: "), p.stderr
    return p.stderr[len("s2s: ") : -1]


class TranslateTest(unittest.TestCase):
    def test_translations_equal_the_command_at_1_and_2_threads(self):
        for model in (RNN, TF):
            for threads in (1, 2):
                with s2s.Translator(model, threads=threads) as tr:
                    got = "".join(t + "\n" for t in tr.translate(TEXTS))
                    self.assertEqual(got, cli_translate(model, "--threads", str(threads)), (model, threads))
                    best = tr.translate_nbest(TEXTS, nbest=3, beam=4, length_penalty=0.5)
                    self.assertTrue(all(len(t.hypotheses) == 3 for t in best if t.text))
                    want = cli_translate(
                        model, "--threads", str(threads), "--nbest", "3", "--beam", "4", "--length-penalty", "0.5"
                    )
                    self.assertEqual(nbest_text(best), want, (model, threads))

    def test_load_options_equal_the_command(self):
        with s2s.Translator(TF, beam=1, precision="f32", split=False, max_len=5) as tr:
            got = "".join(t + "\n" for t in tr.translate(TEXTS))
        self.assertEqual(got, cli_translate(TF, "--beam", "1", "--precision", "f32", "--no-split", "--max-len", "5"))

    def test_an_ensemble_equals_the_command(self):
        with s2s.Translator([TF, TF]) as tr:
            self.assertEqual(tr.info.models, 2)
            self.assertEqual("".join(t + "\n" for t in tr.translate(TEXTS)), cli_translate([TF, TF]))

    def test_constraints_and_glossary_equal_the_command(self):
        texts = ['{"text": "I have a cat.", "constraints": ["chien"]}', "I have a car.", "Where is the book?"]
        glossary = "data/glossary-en-fr.tsv"
        with s2s.Translator(RNN, constraints=True, glossary=glossary) as tr:
            got = "".join(t + "\n" for t in tr.translate(texts))
        self.assertEqual(got, cli_translate(RNN, "--constraints", "--glossary", glossary, texts=texts))

    def test_constraints_given_apart_equal_their_json_form(self):
        json_texts = ['{"text": "I have a cat.", "constraints": ["chien"]}', "I have a car.",
                      '{"text": "Where is the book?", "prefix": "Où", "avoid": ["est"]}']
        plain = ["I have a cat.", "I have a car.", "Where is the book?"]
        given = [s2s.Constraints(require=["chien"]), None, s2s.Constraints(avoid=["est"], prefix="Où")]
        with s2s.Translator(RNN) as tr:
            self.assertEqual(tr.translate(plain, text_constraints=given), tr.translate(json_texts, constraints=True))
            with self.assertRaises(s2s.Error) as cm:
                tr.translate(plain, text_constraints=given[:2])
            self.assertEqual(cm.exception.message, "2 constraints for 3 texts")
            with self.assertRaises(s2s.Error) as cm:
                tr.translate(plain, text_constraints=[None, s2s.Constraints(require=["xyzzyq"]), None])
            self.assertEqual(cm.exception.code, s2s.ERR_INPUT)
            self.assertTrue(cm.exception.message.startswith("text:2: constraint 1: 'xyzzyq'"), cm.exception.message)

    def test_attention_svg_equals_the_command(self):
        with tempfile.TemporaryDirectory() as d:
            run("translate", TF, "--attention-svg", d, "I have a cat.")
            with open(os.path.join(d, "0001.svg"), encoding="utf-8") as f:
                want = f.read()
        with s2s.Translator(TF) as tr:
            t = tr.translate_nbest(["I have a cat.", ""], attention=True)
            self.assertEqual(t[0].attention.svg(f"line 1: I have a cat. \u2192 {t[0].text}"), want)
            self.assertIsNone(t[1].attention.svg("empty"))

    def test_tokenizer_and_evaluation_equal_the_commands(self):
        t = s2s.Tokenizer("fr", lowercase=True)
        self.assertEqual(t.tokenize("J'ai un CHAT."), run("tokenize", "--lang", "fr", "--lowercase", stdin="J'ai un CHAT.\n").stdout.split())
        self.assertEqual(t.detokenize(["j'", "ai", "un", "chat", "."]), "j'ai un chat.")
        with self.assertRaises(s2s.Error) as cm:
            s2s.Tokenizer("zz")
        self.assertEqual(cm.exception.message, "'zz' is not an ISO 639 language code")
        with tempfile.TemporaryDirectory() as d:
            tsv = os.path.join(d, "t.tsv")
            with open(tsv, "w", encoding="utf-8") as f:
                f.write("I have a cat.\tJ'ai un chat.\nWhere is the book?\tOù est le livre ?\n")
            with s2s.Translator(RNN) as tr:
                ev = tr.evaluate(tsv, by_length=True)
            # the same report, but for the decoding time
            def untimed(text):
                return [line for line in text.splitlines() if not line.startswith("decoding:")]

            self.assertEqual(untimed(ev.text), untimed(run("eval", RNN, tsv, "--by-length").stdout))
            self.assertEqual(ev.translations, cli_translate(RNN, texts=["I have a cat.", "Where is the book?"]).splitlines())
            self.assertEqual(ev.json["lines"], 2)

    def test_export_equals_the_command(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            run("export", "--ctranslate2", TF, a)
            with s2s.Translator(TF) as tr:
                tr.export_ctranslate2(b)
                with self.assertRaises(s2s.Error) as cm:
                    tr.export_ctranslate2(b)
                self.assertEqual(cm.exception.code, s2s.ERR_OUTPUT)
            for name in ("model.bin", "config.json"):
                with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
                    self.assertEqual(fa.read(), fb.read(), name)

    def test_language_codes_and_names(self):
        self.assertEqual(s2s.language_code("deu"), "de")
        self.assertEqual(s2s.language_code("kab"), "kab")
        self.assertIsNone(s2s.language_code("zz"))
        self.assertEqual(s2s.language_name("fra"), "French")
        self.assertIsNone(s2s.language_name("kab"))

    def test_attention(self):
        with s2s.Translator(TF) as tr:
            t = tr.translate_nbest(["I have a cat.", ""], attention=True)
            a = t[0].attention
            self.assertEqual(a.source, tr.tokenize("I have a cat."))
            self.assertEqual(len(a.weights), len(a.output))
            for row in a.weights:
                self.assertAlmostEqual(sum(row), 1.0, places=4)
            self.assertEqual(t[1].attention.source, [])
            self.assertIsNone(tr.translate_nbest(["I have a cat."])[0].attention)

    def test_two_models_and_several_threads_in_one_process(self):
        with s2s.Translator(RNN) as a, s2s.Translator(TF) as b:
            wa, wb = a.translate(TEXTS), b.translate(TEXTS)
            with concurrent.futures.ThreadPoolExecutor(6) as pool:
                jobs = [pool.submit((a if k % 2 else b).translate, TEXTS) for k in range(12)]
                for k, job in enumerate(jobs):
                    self.assertEqual(job.result(), wa if k % 2 else wb, k)
        self.assertEqual("".join(t + "\n" for t in wa), cli_translate(RNN))

    def test_tokens_and_info_equal_the_commands(self):
        with s2s.Translator(RNN) as tr:
            info = tr.info
            out = run("info", RNN).stdout
            self.assertIn(f"direction: {info.direction} ({info.source_lang} to {info.target_lang})\n", out)
            self.assertIn(f"vocabulary: source {info.source_vocab}, target {info.target_vocab}\n", out)
            self.assertIn(f"parameters: {info.parameters} ", out)
            self.assertEqual(info.arch, "rnn")
            self.assertEqual(info.config["cell"], "gru")
            self.assertEqual(info.history["steps"], 400)
            text = "Don't stop: it's 3.5 \u2014 \"quoted\" text!"
            case = "--keep-case" if info.keep_case else "--lowercase"
            want = run("tokenize", "--lang", info.source_lang, case, stdin=text + "\n").stdout
            self.assertEqual(" ".join(tr.tokenize(text)) + "\n", want)
            toks = "l' homme , c' est « lui » !"
            want = run("tokenize", "--detok", "--lang", info.target_lang, stdin=toks + "\n").stdout
            self.assertEqual(tr.detokenize(toks.split()) + "\n", want)
            self.assertEqual(tr.detokenize(toks) + "\n", want)


class ScoreTest(unittest.TestCase):
    HYPS = ["The cat sat on the mat.", "A dog barks loudly!", "", "Ça va très bien, merci."]
    REF1 = ["The cat is on the mat.", "The dog barks.", "Nothing here.", "Ça va bien, merci."]
    REF2 = ["There is a cat on the mat.", "A dog is barking loudly!", "", "Très bien, merci !"]

    @staticmethod
    def lines(sc):
        b, c = f"BLEU|{sc.bleu_signature}", f"chrF2|{sc.chrf_signature}"
        pad = max(len(b), len(c))
        p = sc.precisions
        return (
            f"{b:>{pad}} = {sc.bleu:.6f} {p[0]:.1f}/{p[1]:.1f}/{p[2]:.1f}/{p[3]:.1f} "
            f"(BP = {sc.brevity_penalty:.3f} ratio = {sc.ratio:.3f} hyp_len = {sc.hyp_len} ref_len = {sc.ref_len})\n"
            f"{c:>{pad}} = {sc.chrf:.6f}\n"
        )

    def test_scores_equal_the_command(self):
        with tempfile.TemporaryDirectory() as d:
            files = []
            for name, lines in (("h", self.HYPS), ("r1", self.REF1), ("r2", self.REF2)):
                path = os.path.join(d, name)
                with open(path, "w", encoding="utf-8") as f:
                    f.write("".join(t + "\n" for t in lines))
                files.append(path)
            h, r1, r2 = files
            self.assertEqual(self.lines(s2s.score(self.HYPS, self.REF1)), run("score", h, r1, "-w", "6").stdout)
            self.assertEqual(
                self.lines(s2s.score(self.HYPS, [self.REF1, self.REF2])), run("score", h, r1, r2, "-w", "6").stdout
            )
            got = s2s.score(self.HYPS, [self.REF1, self.REF2], tokenize="intl", lowercase=True, chrf_lowercase=True)
            want = run("score", h, r1, r2, "-w", "6", "-tok", "intl", "-lc", "--chrf-lowercase").stdout
            self.assertEqual(self.lines(got), want)


class ErrorTest(unittest.TestCase):
    def assertError(self, code, message, fn, *args, **kwargs):
        with self.assertRaises(s2s.Error) as cm:
            fn(*args, **kwargs)
        self.assertEqual(cm.exception.code, code)
        self.assertEqual(cm.exception.message, message)
        self.assertEqual(str(cm.exception), message)

    def test_errors_raise_with_the_librarys_message(self):
        missing = "/nonexistent/model.s2s"
        self.assertError(s2s.ERR_MODEL, cli_message("translate", missing, "x"), s2s.Translator, missing)
        self.assertError(s2s.ERR_MODEL, cli_message("translate", "README.md", "x"), s2s.Translator, "README.md")
        self.assertError(s2s.ERR_ARGUMENT, "beam must be in 1..100, not 0", s2s.Translator, RNN, beam=0)
        self.assertError(s2s.ERR_ARGUMENT, "precision must be int8, bf16 or f32, not 'f16'", s2s.Translator, RNN,
                         precision="f16")
        with s2s.Translator(RNN) as tr:
            # what the command says of the same line in a file, "FILE:LINE: ..."
            with tempfile.NamedTemporaryFile("wb", suffix=".txt") as f:
                f.write(b"fine\nbad \xff\n")
                f.flush()
                msg = cli_message("translate", RNN, "-i", f.name)
                self.assertTrue(msg.startswith(f.name + ":2: "), msg)
            self.assertError(s2s.ERR_INPUT, "text:2" + msg[len(f.name) + 2 :], tr.translate, ["fine", "bad \udcff"])
            self.assertError(s2s.ERR_INPUT, "text:1: NUL byte at byte 2", tr.translate, ["a\0b"])
            self.assertError(s2s.ERR_ARGUMENT, "nbest must be in 1..beam (5), not 6", tr.translate_nbest, ["a"], 6)
            self.assertError(s2s.ERR_INPUT, "invalid UTF-8 at byte 2", tr.tokenize, "a\udcc3")
            self.assertEqual(tr.translate(["Hello."]), [cli_translate(RNN, texts=["Hello."])[:-1]])
            with self.assertRaises(TypeError):
                tr.translate("one string, not a list")
            with self.assertRaises(TypeError):
                tr.translate(["a"], colour="blue")
        self.assertError(s2s.ERR_ARGUMENT, "the translator was closed", tr.translate, ["a"])
        self.assertError(s2s.ERR_ARGUMENT, "tokenize must be 13a, none or intl, not 'x'", s2s.score, ["a"], ["a"],
                         tokenize="x")
        self.assertError(s2s.ERR_ARGUMENT, "no hypotheses to score", s2s.score, [], [])
        self.assertEqual(s2s.library_version(), s2s.__version__)


class ReadmeTest(unittest.TestCase):
    def test_the_readme_example_as_it_stands(self):
        with open("README.md", encoding="utf-8") as f:
            readme = f.read()
        section = readme[readme.index("## Use s2s from Python") :]
        code = re.search(r"```python\n(.*?)\n```\n", section, re.S).group(1) + "\n"
        sources, refs = TEXTS[:10], [t.upper() for t in TEXTS[:10]]
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, content in (("example.py", code), ("src.txt", sources), ("ref.txt", refs)):
                paths[name] = os.path.join(d, name)
                with open(paths[name], "w", encoding="utf-8") as f:
                    f.write(content if isinstance(content, str) else "".join(t + "\n" for t in content))
            p = subprocess.run(
                [sys.executable, paths["example.py"], TF, paths["src.txt"], paths["ref.txt"]],
                capture_output=True, text=True, check=False,
            )
            self.assertEqual(p.returncode, 0, p.stderr)
            best = cli_translate(TF, texts=sources)
            nbest = "".join(
                f"{float(score):.6f} {text}\n"
                for _, text, score in (line.split(" ||| ") for line in cli_translate(TF, "--nbest", "3", texts=sources[:1]).splitlines())
            )
            hyp_path = os.path.join(d, "hyp.txt")
            with open(hyp_path, "w", encoding="utf-8") as f:
                f.write(best)
            bleu = run("score", hyp_path, paths["ref.txt"], "-m", "bleu", "-w", "2").stdout.split(" = ")[1].split()[0]
            self.assertEqual(p.stdout, f"{best}{nbest}BLEU {bleu}\n")


if __name__ == "__main__":
    unittest.main(verbosity=1)
