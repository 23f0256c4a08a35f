#!/bin/bash
# Decoding against CTranslate2 on the same weights (docs/cli/export.md, bench/README.md):
#   bench/ct2.sh [MODEL]
# MODEL: a Transformer trained on fra.txt with the default recipe (its test split is
# MODEL.d/test.tsv); without it, $BENCH_CT2_MODEL, else bench/out/serve/model.s2s (trained
# for 10 minutes the first time, as bench/serve.sh does). CTranslate2 is not part of s2s
# and is never downloaded here: its rows need a build at $CT2_ROOT (default bench/ct2,
# ignored by git) holding bin/ct2-translator and lib/libctranslate2.so; without one the
# script says so and skips them.
#
# s2s export --ctranslate2 writes the model in CTranslate2's format; both engines then
# translate the same N sentences (the first $BENCH_CT2_SENT of the test split, default
# 500) as whole processes, s2s from text (`translate --no-split --no-copy-numbers`), and
# CTranslate2 from s2s's tokens (tokenized and detokenized outside the timing). Rows:
# greedy and beam 5, batch 1 and 64, int8 and f32; each engine at its best of
# several thread settings (s2s --threads 1 and 2; CTranslate2 intra_threads 1 and 2 with
# inter_threads 1, and intra 1 with inter 2), each the best of $BENCH_CT2_RUNS (3)
# runs, with the start (the same command on an empty input: load, quantization) left
# out. Peak memory is the process's maximum resident set (GNU time). BLEU of both
# outputs against the references is beside each row, and the f32 greedy rows count the
# lines where the two outputs differ. Cold start: one sentence as a whole process,
# median of 5, CTranslate2 given the tokens. Prints a Markdown table and writes it to
# bench/out/ct2/results.md.
set -eu
cd "$(dirname "$0")/.."
s2s=$(realpath "${S2S:-./s2s}")
model=${1:-${BENCH_CT2_MODEL:-bench/out/serve/model.s2s}}
ct2=${CT2_ROOT:-bench/ct2}
n=${BENCH_CT2_SENT:-500}
runs=${BENCH_CT2_RUNS:-3}
out=bench/out/ct2
if [ ! -x "$ct2/bin/ct2-translator" ]; then
    echo "bench/ct2.sh: CTranslate2 rows skipped: no build at $ct2 (bin/ct2-translator); set CT2_ROOT (bench/README.md)"
    exit 0
fi
export LD_LIBRARY_PATH="$(realpath "$ct2")/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ ! -f "$model" ]; then
    [ "$model" = bench/out/serve/model.s2s ] || { echo "bench/ct2.sh: $model is missing" >&2; exit 2; }
    mkdir -p bench/out/serve
    echo "bench/ct2.sh: training $model (the default recipe, 10 minutes)" >&2
    "$s2s" train ../shared/data/fra.txt -o "$model" --time 10 > bench/out/serve/train.log 2>&1
fi
test_tsv=$model.d/test.tsv
[ -f "$test_tsv" ] || { echo "bench/ct2.sh: $test_tsv is missing (MODEL must be trained from a corpus)" >&2; exit 2; }
mkdir -p "$out"
rm -rf "$out/model"
"$s2s" export --ctranslate2 "$model" "$out/model" > /dev/null
src_lang=$(sed -n 's/^Source (\([a-z]*\)).*/\1/p' "$out/model/TOKENIZATION.txt")
tgt_lang=$(sed -n 's/^Target (\([a-z]*\)).*/\1/p' "$out/model/TOKENIZATION.txt")
tok_opts=$(sed -n 's/^  s2s tokenize \(--lang [a-z]*.*\) < input.txt > input.tok$/\1/p' "$out/model/TOKENIZATION.txt")
head -n "$n" "$test_tsv" | cut -f1 > "$out/src.txt"
head -n "$n" "$test_tsv" | cut -f2 > "$out/ref.txt"
# shellcheck disable=SC2086
(cd "$out/model" && "$s2s" tokenize $tok_opts) < "$out/src.txt" > "$out/src.tok"
: > "$out/empty.txt"

now() { date +%s.%N; }
# seconds and peak kB of one whole process: "SECONDS KB"
timed() {
    local t0 t1
    t0=$(now)
    /usr/bin/time -f "%M" -o "$out/time.txt" "$@" > "$out/last.out" 2> "$out/last.err" ||
        { echo "bench/ct2.sh: failed: $*" >&2; cat "$out/last.err" >&2; exit 1; }
    t1=$(now)
    echo "$(echo "$t1 - $t0" | bc -l) $(tail -1 "$out/time.txt")"
}
s2s_cmd() { # INPUT BATCH BEAM PRECISION THREADS
    echo "$s2s" translate "$model" -i "$1" --batch "$2" --beam "$3" --precision "$4" --threads "$5" \
        --no-split --no-copy-numbers
}
ct2_cmd() { # INPUT BATCH BEAM COMPUTE INTRA INTER
    echo "$ct2/bin/ct2-translator" --model "$out/model" --src "$1" --batch_size "$2" --beam_size "$3" \
        --compute_type "$4" --intra_threads "$5" --inter_threads "$6" --max_decoding_length 256 --min_decoding_length 0
}
# the best sentences/s of a command line over the runs, its start left out: "RATE KB SETTING"
best_of() { # SETTING CMD-WITH-INPUT CMD-WITH-EMPTY
    local setting=$1 full=$2 empty=$3 best=0 kb=0 t e s r
    for _ in $(seq "$runs"); do
        read -r e _ <<< "$(timed $empty)"
        read -r t kb <<< "$(timed $full)"
        s=$(echo "$t - $e" | bc -l)
        r=$(echo "$n / $s" | bc -l)
        if [ "$(echo "$r > $best" | bc -l)" = 1 ]; then best=$r; cp "$out/last.out" "$out/best.out"; fi
    done
    printf '%.1f %d %s\n' "$best" "$kb" "$setting"
}
bleu() { "$s2s" score "$1" "$out/ref.txt" | head -1 | sed 's/^[^=]* = \([0-9.]*\) .*/\1/'; }

table=$out/results.md
{
    ver=$(ls "$ct2"/lib/libctranslate2.so.*.*.* 2> /dev/null | head -1 | sed 's/.*libctranslate2\.so\.//')
    echo "Decoding against CTranslate2 ${ver:-(version unknown)}, $(basename "$model"), the first $n sentences of its test split"
    echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; flags: $(grep -m1 -o -w -E 'avx512f|avx512_bf16|avx512_vnni|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
    echo
    echo "| decoding | batch | weights | s2s sent/s | CTranslate2 sent/s | ratio | s2s peak MiB | CT2 peak MiB | s2s BLEU | CT2 BLEU | lines differing |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} > "$table"
for beam in 1 5; do
    for batch in 1 64; do
        for prec in int8 f32; do
            ct=$([ "$prec" = int8 ] && echo int8 || echo float32)
            s_best="0 0 -"
            for th in 1 2; do
                r=$(best_of "--threads $th" "$(s2s_cmd "$out/src.txt" "$batch" "$beam" "$prec" "$th")" \
                    "$(s2s_cmd "$out/empty.txt" "$batch" "$beam" "$prec" "$th")")
                if [ "$(echo "${r%% *} > ${s_best%% *}" | bc -l)" = 1 ]; then s_best=$r; cp "$out/best.out" "$out/s2s.out"; fi
            done
            c_best="0 0 -"
            for it in "1 1" "2 1" "1 2"; do
                set -- $it
                r=$(best_of "intra $1 inter $2" "$(ct2_cmd "$out/src.tok" "$batch" "$beam" "$ct" "$1" "$2")" \
                    "$(ct2_cmd "$out/empty.txt" "$batch" "$beam" "$ct" "$1" "$2")")
                if [ "$(echo "${r%% *} > ${c_best%% *}" | bc -l)" = 1 ]; then c_best=$r; cp "$out/best.out" "$out/ct2.tok"; fi
            done
            "$s2s" tokenize --lang "$tgt_lang" --detok < "$out/ct2.tok" > "$out/ct2.out"
            read -r sr sk ss <<< "$s_best"
            read -r cr ck cs <<< "$c_best"
            diff=$(paste -d '\t' "$out/s2s.out" "$out/ct2.out" | awk -F '\t' '$1 != $2' | wc -l)
            printf '| %s | %d | %s | %s (%s) | %s (%s) | %.2f | %d | %d | %s | %s | %s |\n' \
                "$([ "$beam" = 1 ] && echo greedy || echo "beam $beam")" "$batch" "$prec" "$sr" "$ss" "$cr" "$cs" \
                "$(echo "$sr / $cr" | bc -l)" $((sk / 1024)) $((ck / 1024)) "$(bleu "$out/s2s.out")" \
                "$(bleu "$out/ct2.out")" "$diff" >> "$table"
        done
    done
done
# cold start: one sentence as a whole process, int8, beam 5 (each engine's default
# decoding), 1 thread, median of 5
head -1 "$out/src.txt" > "$out/one.txt"
head -1 "$out/src.tok" > "$out/one.tok"
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
s_cold=$(for _ in 1 2 3 4 5; do timed "$s2s" translate "$model" --threads 1 "$(cat "$out/one.txt")" | cut -d' ' -f1; done | median)
c_cold=$(for _ in 1 2 3 4 5; do timed $(ct2_cmd "$out/one.tok" 1 5 int8 1 1) | cut -d' ' -f1; done | median)
{
    echo
    printf 'Cold start, one sentence as a whole process (int8, beam 5, 1 thread; median of 5): s2s %.0f ms, CTranslate2 %.0f ms (tokens given; without s2s tokenize)\n' \
        "$(echo "$s_cold * 1000" | bc -l)" "$(echo "$c_cold * 1000" | bc -l)"
} >> "$table"
cat "$table"
